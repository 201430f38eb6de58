// Telemetry over one kernel per node: arm, reset, snapshot (summed with
// checks), disarm.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_cache/kernel_cache.hpp"
#include "mock_ep_fixture.hpp"

namespace nxrt::kernel_cache {
namespace {

using kernel_cache_test::MakeMockEp;
using kernel_cache_test::MockEp;
using kernel_cache_test::Request;
using kernel_cache_test::SlotResetter;
using kernel_cache_test::TestGraph;
using kernel_cache_test::XwShapes;

// Two nodes with two variants each (nothing shared, so every variant is its
// own kernel); node `add` on `first`, node `mul` on `second`.
struct TwoNodes {
  TwoNodes(MockEp first_ep, MockEp second_ep)
      : first(std::move(first_ep)), second(std::move(second_ep)), cache(resetter) {
    add = g.AddNode("Add", "add", true);
    mul = g.AddNode("Mul", "mul", true);
    for (int64_t batch : {1, 2}) {
      const std::vector<InputShape> shapes = XwShapes(batch);
      PreBinding binding;
      EXPECT_TRUE(cache.GetOrCreate(Request(g, add, first, shapes), binding).ok());
      EXPECT_TRUE(cache.GetOrCreate(Request(g, mul, second, shapes), binding).ok());
    }
  }
  MockEp first;
  MockEp second;
  TestGraph g;
  graph::NodeId add;
  graph::NodeId mul;
  SlotResetter resetter;
  KernelCache cache;
};

TEST(KernelCacheTelemetryTest, ArmsOneKernelPerNode) {
  TwoNodes t(MakeMockEp({{"telemetry", "logical_bytes:5"}}),
             MakeMockEp({{"telemetry", "logical_bytes:5"}}));
  auto armed = t.cache.ArmTelemetry(11);
  ASSERT_TRUE(armed.ok()) << armed.status().ToString();
  EXPECT_EQ(*armed, 2u);
  EXPECT_EQ(t.first.CallsStartingWith("telemetry_arm"),
            std::vector<std::string>{"telemetry_arm k1 11 armed"});
  EXPECT_EQ(t.second.CallsStartingWith("telemetry_arm"),
            std::vector<std::string>{"telemetry_arm k1 11 armed"});
}

TEST(KernelCacheTelemetryTest, AFailedArmDisarmsEveryNodeAndArmsNothingLater) {
  TwoNodes t(MakeMockEp({{"telemetry", "logical_bytes:5"}}),
             MakeMockEp({{"telemetry", "logical_bytes:5"}, {"fail_telemetry_arm", "1"}}));
  auto armed = t.cache.ArmTelemetry(7);
  ASSERT_FALSE(armed.ok());
  EXPECT_NE(armed.status().message().find("injected failure in telemetry_arm"), std::string::npos)
      << armed.status().message();
  // Rolled back: every node is disarmed, whichever was armed first.
  EXPECT_EQ(t.first.CallsStartingWith("telemetry_disarm"),
            std::vector<std::string>{"telemetry_disarm k1"});
  EXPECT_EQ(t.second.CallsStartingWith("telemetry_disarm"),
            std::vector<std::string>{"telemetry_disarm k1"});

  // The failed request is not armed on kernels made afterwards.
  const size_t arms_before = t.first.CallsStartingWith("telemetry_arm").size();
  PreBinding binding;
  ASSERT_TRUE(t.cache.GetOrCreate(Request(t.g, t.add, t.first, XwShapes(9)), binding).ok());
  EXPECT_EQ(t.first.CallsStartingWith("telemetry_arm").size(), arms_before);
}

TEST(KernelCacheTelemetryTest, KernelsWithNothingToMeasureAreNotCounted) {
  TwoNodes t(MakeMockEp({{"telemetry", "logical_bytes:5"}}), MakeMockEp());
  auto armed = t.cache.ArmTelemetry(3);
  ASSERT_TRUE(armed.ok()) << armed.status().ToString();
  EXPECT_EQ(*armed, 1u);
  EXPECT_EQ(t.second.CallsStartingWith("telemetry_arm"),
            std::vector<std::string>{"telemetry_arm k1 3 nothing"});
}

TEST(KernelCacheTelemetryTest, NothingArmedMeansNewKernelsAreNotArmed) {
  auto ep = MakeMockEp();  // no telemetry: arming finds nothing
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter);
  PreBinding binding;
  const std::vector<InputShape> two = XwShapes(2);
  const std::vector<InputShape> three = XwShapes(3);
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, two), binding).ok());
  auto armed = cache.ArmTelemetry(4);
  ASSERT_TRUE(armed.ok());
  EXPECT_EQ(*armed, 0u);
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, three), binding).ok());
  EXPECT_EQ(ep.CallsStartingWith("telemetry_arm"),
            std::vector<std::string>{"telemetry_arm k1 4 nothing"});
}

TEST(KernelCacheTelemetryTest, SnapshotSumsOneKernelPerNode) {
  const uint64_t uploaded = 100, committed = 60, logical = 1000, unique = 400, page_ins = 3,
                 first_physical = 150, second_physical = 250;
  auto options = [&](uint64_t physical) {
    return plugin_host::ProviderOptions{
        {"telemetry", "uploaded_bytes:" + std::to_string(uploaded) + ",committed_bytes:" +
                          std::to_string(committed) + ",logical_bytes:" + std::to_string(logical) +
                          ",unique_bytes:" + std::to_string(unique) +
                          ",page_ins:" + std::to_string(page_ins) +
                          ",physical_bytes:" + std::to_string(physical)}};
  };
  TwoNodes t(MakeMockEp(options(first_physical)), MakeMockEp(options(second_physical)));
  ASSERT_TRUE(t.cache.ArmTelemetry(1).ok());
  auto totals = t.cache.SnapshotTelemetry();
  ASSERT_TRUE(totals.ok()) << totals.status().ToString();
  EXPECT_EQ(totals->uploaded_bytes, 2 * uploaded);
  EXPECT_EQ(totals->committed_bytes, 2 * committed);
  EXPECT_EQ(totals->logical_bytes, 2 * logical);
  EXPECT_EQ(totals->unique_bytes, 2 * unique);
  EXPECT_EQ(totals->page_ins, 2 * page_ins);
  ASSERT_TRUE(totals->physical_bytes.has_value());
  EXPECT_EQ(*totals->physical_bytes, first_physical + second_physical);
  ASSERT_TRUE(totals->byte_hit_rate.has_value());
  EXPECT_DOUBLE_EQ(*totals->byte_hit_rate,
                   1.0 - static_cast<double>(first_physical + second_physical) /
                             static_cast<double>(2 * logical));
  // One snapshot per node, not per variant.
  EXPECT_EQ(t.first.CallsStartingWith("telemetry_snapshot").size(), 1u);
  EXPECT_EQ(t.second.CallsStartingWith("telemetry_snapshot").size(), 1u);
}

TEST(KernelCacheTelemetryTest, PhysicalBytesNeedEveryObservingKernel) {
  TwoNodes t(MakeMockEp({{"telemetry", "logical_bytes:10,physical_bytes:4"}}),
             MakeMockEp({{"telemetry", "logical_bytes:10"}}));
  ASSERT_TRUE(t.cache.ArmTelemetry(1).ok());
  auto totals = t.cache.SnapshotTelemetry();
  ASSERT_TRUE(totals.ok()) << totals.status().ToString();
  EXPECT_EQ(totals->logical_bytes, 20u);
  EXPECT_FALSE(totals->physical_bytes.has_value());
  EXPECT_FALSE(totals->byte_hit_rate.has_value());
}

TEST(KernelCacheTelemetryTest, AnUnarmedCacheObservesNothing) {
  TwoNodes t(MakeMockEp({{"telemetry", "logical_bytes:10,physical_bytes:4"}}),
             MakeMockEp({{"telemetry", "logical_bytes:10,physical_bytes:4"}}));
  auto totals = t.cache.SnapshotTelemetry();
  ASSERT_TRUE(totals.ok()) << totals.status().ToString();
  EXPECT_EQ(totals->logical_bytes, 0u);
  EXPECT_FALSE(totals->physical_bytes.has_value());
  EXPECT_FALSE(totals->byte_hit_rate.has_value());
}

TEST(KernelCacheTelemetryTest, AnOverflowingSumIsAnError) {
  const std::string max = std::to_string(std::numeric_limits<uint64_t>::max());
  TwoNodes t(MakeMockEp({{"telemetry", "page_ins:" + max}}),
             MakeMockEp({{"telemetry", "page_ins:" + max}}));
  ASSERT_TRUE(t.cache.ArmTelemetry(1).ok());
  auto totals = t.cache.SnapshotTelemetry();
  ASSERT_FALSE(totals.ok());
  EXPECT_EQ(totals.status().code(), StatusCode::kInternal);
  EXPECT_NE(totals.status().message().find("page-ins"), std::string::npos);
}

TEST(KernelCacheTelemetryTest, ResetAndDisarmReachOneKernelPerNode) {
  TwoNodes t(MakeMockEp({{"telemetry", "logical_bytes:5"}}),
             MakeMockEp({{"telemetry", "logical_bytes:5"}}));
  ASSERT_TRUE(t.cache.ArmTelemetry(2).ok());
  ASSERT_TRUE(t.cache.ResetTelemetry().ok());
  EXPECT_EQ(t.first.CallsStartingWith("telemetry_reset"),
            std::vector<std::string>{"telemetry_reset k1"});
  EXPECT_EQ(t.second.CallsStartingWith("telemetry_reset"),
            std::vector<std::string>{"telemetry_reset k1"});
  ASSERT_TRUE(t.cache.DisarmTelemetry().ok());
  EXPECT_EQ(t.first.CallsStartingWith("telemetry_disarm"),
            std::vector<std::string>{"telemetry_disarm k1"});
  EXPECT_EQ(t.second.CallsStartingWith("telemetry_disarm"),
            std::vector<std::string>{"telemetry_disarm k1"});
  auto totals = t.cache.SnapshotTelemetry();
  ASSERT_TRUE(totals.ok());
  EXPECT_EQ(totals->logical_bytes, 0u);

  // Disarmed: a new variant is not armed.
  const std::vector<InputShape> shapes = XwShapes(9);
  PreBinding binding;
  ASSERT_TRUE(t.cache.GetOrCreate(Request(t.g, t.add, t.first, shapes), binding).ok());
  EXPECT_EQ(t.first.CallsStartingWith("telemetry_arm").size(), 1u);
}

}  // namespace
}  // namespace nxrt::kernel_cache
