#include "kernel_cache/variants_per_node.hpp"

#include <cstdlib>

#include <gtest/gtest.h>

namespace nxrt::kernel_cache {
namespace {

TEST(VariantsPerNodeTest, ParsesPositiveIntegersOnly) {
  EXPECT_EQ(ParseKernelVariantsPerNode("8"), std::optional<size_t>(8));
  EXPECT_EQ(ParseKernelVariantsPerNode(" 12 "), std::optional<size_t>(12));
  EXPECT_EQ(ParseKernelVariantsPerNode("0"), std::nullopt);
  EXPECT_EQ(ParseKernelVariantsPerNode("-3"), std::nullopt);
  EXPECT_EQ(ParseKernelVariantsPerNode("4x"), std::nullopt);
  EXPECT_EQ(ParseKernelVariantsPerNode(""), std::nullopt);
  EXPECT_EQ(ParseKernelVariantsPerNode("99999999999999999999999"), std::nullopt);
}

// Each case runs in a fresh process (the threadsafe death-test style re-runs
// the program), since the variable is read once per process.
int ResolveWith(const char* value, const char* changed_later) {
  if (value)
    setenv(kKernelVariantsPerNodeEnv, value, 1);
  else
    unsetenv(kKernelVariantsPerNodeEnv);
  const size_t first = KernelCacheVariantsPerNode();
  setenv(kKernelVariantsPerNodeEnv, changed_later, 1);
  const size_t second = KernelCacheVariantsPerNode();
  return first == second ? static_cast<int>(first) : 100;
}

TEST(VariantsPerNodeDeathTest, EnvironmentOverridesTheDefaultOncePerProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(ResolveWith("7", "9")), ::testing::ExitedWithCode(7), "");
  EXPECT_EXIT(std::exit(ResolveWith(nullptr, "9")),
              ::testing::ExitedWithCode(static_cast<int>(kDefaultKernelVariantsPerNode)), "");
  EXPECT_EXIT(std::exit(ResolveWith("zero", "9")),
              ::testing::ExitedWithCode(static_cast<int>(kDefaultKernelVariantsPerNode)), "");
}

}  // namespace
}  // namespace nxrt::kernel_cache
