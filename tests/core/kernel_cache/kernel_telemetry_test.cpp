#include "kernel_cache/kernel_telemetry.hpp"

#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

namespace nxrt::kernel_cache {
namespace {

nxrt_telemetry Snapshot(uint64_t uploaded, uint64_t logical, std::optional<uint64_t> physical) {
  nxrt_telemetry t{};
  t.struct_size = sizeof(t);
  t.uploaded_bytes = uploaded;
  t.committed_bytes = uploaded / 2;
  t.logical_bytes = logical;
  t.unique_bytes = logical / 4;
  t.page_ins = 1;
  t.has_physical_bytes = physical.has_value();
  t.physical_bytes = physical.value_or(0);
  return t;
}

TEST(TelemetrySumTest, NothingObservedHasNoPhysicalBytes) {
  const TelemetrySum sum;
  const TelemetryTotals totals = sum.Totals();
  EXPECT_EQ(totals.logical_bytes, 0u);
  EXPECT_FALSE(totals.physical_bytes.has_value());
  EXPECT_FALSE(totals.byte_hit_rate.has_value());
}

TEST(TelemetrySumTest, SumsEveryFieldAndDerivesTheHitRate) {
  TelemetrySum sum;
  ASSERT_TRUE(sum.Add(Snapshot(100, 400, 50)).ok());
  ASSERT_TRUE(sum.Add(Snapshot(20, 600, 250)).ok());
  const TelemetryTotals totals = sum.Totals();
  EXPECT_EQ(totals.uploaded_bytes, 120u);
  EXPECT_EQ(totals.committed_bytes, 60u);
  EXPECT_EQ(totals.logical_bytes, 1000u);
  EXPECT_EQ(totals.unique_bytes, 250u);
  EXPECT_EQ(totals.page_ins, 2u);
  ASSERT_TRUE(totals.physical_bytes.has_value());
  EXPECT_EQ(*totals.physical_bytes, 300u);
  ASSERT_TRUE(totals.byte_hit_rate.has_value());
  EXPECT_DOUBLE_EQ(*totals.byte_hit_rate, 1.0 - 300.0 / 1000.0);
}

TEST(TelemetrySumTest, PhysicalBytesNeedEveryObservedKernel) {
  TelemetrySum sum;
  ASSERT_TRUE(sum.Add(Snapshot(1, 10, 5)).ok());
  ASSERT_TRUE(sum.Add(Snapshot(1, 10, std::nullopt)).ok());
  const TelemetryTotals totals = sum.Totals();
  EXPECT_EQ(totals.logical_bytes, 20u);
  EXPECT_FALSE(totals.physical_bytes.has_value());
  EXPECT_FALSE(totals.byte_hit_rate.has_value());
}

TEST(TelemetrySumTest, HitRateIsClampedAtZeroAndAbsentWithoutLogicalBytes) {
  TelemetrySum more_physical;
  ASSERT_TRUE(more_physical.Add(Snapshot(1, 10, 40)).ok());
  EXPECT_DOUBLE_EQ(*more_physical.Totals().byte_hit_rate, 0.0);

  TelemetrySum no_logical;
  ASSERT_TRUE(no_logical.Add(Snapshot(1, 0, 40)).ok());
  EXPECT_EQ(no_logical.Totals().physical_bytes, std::optional<uint64_t>(40));
  EXPECT_FALSE(no_logical.Totals().byte_hit_rate.has_value());
}

TEST(TelemetrySumTest, OverflowIsAnErrorAndLeavesTheSum) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  TelemetrySum sum;
  ASSERT_TRUE(sum.Add(Snapshot(kMax, 10, 5)).ok());
  const Status overflow = sum.Add(Snapshot(1, 10, 5));
  ASSERT_FALSE(overflow.ok());
  EXPECT_EQ(overflow.code(), StatusCode::kInternal);
  EXPECT_NE(overflow.message().find("uploaded bytes"), std::string::npos);
  EXPECT_EQ(sum.Totals().uploaded_bytes, kMax);
  EXPECT_EQ(sum.Totals().logical_bytes, 10u);

  TelemetrySum physical;
  ASSERT_TRUE(physical.Add(Snapshot(1, 10, kMax)).ok());
  const Status physical_overflow = physical.Add(Snapshot(1, 10, 1));
  ASSERT_FALSE(physical_overflow.ok());
  EXPECT_NE(physical_overflow.message().find("physical bytes"), std::string::npos);
  EXPECT_EQ(physical.Totals().uploaded_bytes, 1u);
}

}  // namespace
}  // namespace nxrt::kernel_cache
