#include "kernel_cache/artifact_readiness.hpp"

#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

namespace nxrt::kernel_cache {
namespace {

TEST(ArtifactReadinessTest, NextEpochIsOneMoreAndDoesNotMove) {
  const ArtifactReadiness readiness(41);
  auto next = readiness.CheckedNextEpoch();
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(*next, 42u);
  EXPECT_EQ(readiness.epoch(), 41u);
}

TEST(ArtifactReadinessTest, AnExhaustedEpochIsAnError) {
  const ArtifactReadiness readiness(std::numeric_limits<uint64_t>::max());
  auto next = readiness.CheckedNextEpoch();
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.status().code(), StatusCode::kInternal);
  EXPECT_NE(next.status().message().find("exhausted"), std::string::npos);
  EXPECT_EQ(readiness.epoch(), std::numeric_limits<uint64_t>::max());
}

}  // namespace
}  // namespace nxrt::kernel_cache
