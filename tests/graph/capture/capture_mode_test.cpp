#include "nxrt/graph/capture_mode.hpp"

#include <gtest/gtest.h>

#include "scoped_env.hpp"

namespace nxrt::graph {
namespace {

using testing::ScopedEnv;

TEST(CaptureMode, ParsesFailSafeSpellings) {
  for (const char* text : {"failsafe", "fail-safe", "1", "FailSafe", " FAIL-SAFE\n"}) {
    EXPECT_EQ(ParseCaptureMode(text), CaptureMode::kFailSafe) << text;
  }
}

TEST(CaptureMode, ParsesDenylistSpellings) {
  for (const char* text : {"denylist", "deny", "0", "DenyList", "  deny\t"}) {
    EXPECT_EQ(ParseCaptureMode(text), CaptureMode::kDenylist) << text;
  }
}

TEST(CaptureMode, AnythingElseIsFailSafe) {
  for (const char* text : {"", "allow", "2", "denylist2", "off"}) {
    EXPECT_EQ(ParseCaptureMode(text), CaptureMode::kFailSafe) << text;
  }
}

TEST(CaptureMode, UnsetVariableMeansFailSafe) {
  ScopedEnv env("NXRT_CAPTURE_CLASSIFIER", std::nullopt);
  EXPECT_EQ(ResolveCaptureMode(std::nullopt), CaptureMode::kFailSafe);
}

TEST(CaptureMode, VariableDecidesWhenTheOptionIsUnset) {
  ScopedEnv env("NXRT_CAPTURE_CLASSIFIER", "denylist");
  EXPECT_EQ(ResolveCaptureMode(std::nullopt), CaptureMode::kDenylist);
}

TEST(CaptureMode, OptionWinsOverTheVariable) {
  {
    ScopedEnv env("NXRT_CAPTURE_CLASSIFIER", "deny");
    EXPECT_EQ(ResolveCaptureMode(CaptureMode::kFailSafe), CaptureMode::kFailSafe);
  }
  {
    ScopedEnv env("NXRT_CAPTURE_CLASSIFIER", "failsafe");
    EXPECT_EQ(ResolveCaptureMode(CaptureMode::kDenylist), CaptureMode::kDenylist);
  }
}

TEST(CaptureMode, Names) {
  EXPECT_EQ(CaptureModeName(CaptureMode::kFailSafe), "fail-safe");
  EXPECT_EQ(CaptureModeName(CaptureMode::kDenylist), "denylist");
}

}  // namespace
}  // namespace nxrt::graph
