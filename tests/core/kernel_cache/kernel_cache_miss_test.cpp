// What a miss asks of the plugin, in order: claim at concrete shapes, create,
// constant flags, adopt or prepare, telemetry, capture decision; and the one
// publication that moves the readiness epoch.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_cache/kernel_cache.hpp"
#include "mock_ep_fixture.hpp"

namespace nxrt::kernel_cache {
namespace {

using kernel_cache_test::MakeMockEp;
using kernel_cache_test::MockLibrary;
using kernel_cache_test::Request;
using kernel_cache_test::SlotResetter;
using kernel_cache_test::TestGraph;
using kernel_cache_test::XwShapes;

TEST(KernelCacheMissTest, CallsThePluginInOrder) {
  auto ep = MakeMockEp();
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter);
  PreBinding binding;
  const std::vector<InputShape> shapes = XwShapes(2);
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, shapes, true), binding).ok());
  const std::vector<std::string> expected{
      "create_ep",
      "claim Add claimed",
      "create_kernel Add k1 [2,3] [3]",
      "set_constant_inputs k1 01",
      "prepare k1 1",
      "capture_decision k1 1",
      "share k1 none",
  };
  EXPECT_EQ(ep.Calls(), expected);
}

TEST(KernelCacheMissTest, PassesTheCaptureDecision) {
  auto ep = MakeMockEp();
  TestGraph g;
  const graph::NodeId eligible = g.AddNode("Add", "add", true);
  const graph::NodeId eager = g.AddNode("Mul", "mul", true);
  SlotResetter resetter;
  KernelCache cache(resetter);
  PreBinding binding;
  const std::vector<InputShape> shapes = XwShapes(2);
  ASSERT_TRUE(cache.GetOrCreate(Request(g, eligible, ep, shapes, true), binding).ok());
  ASSERT_TRUE(cache.GetOrCreate(Request(g, eager, ep, shapes, false), binding).ok());
  EXPECT_EQ(ep.CallsStartingWith("capture_decision"),
            (std::vector<std::string>{"capture_decision k1 1", "capture_decision k2 0"}));
}

TEST(KernelCacheMissTest, ADeclineAtConcreteShapesIsAnActionableUnsupportedError) {
  auto ep = MakeMockEp({{"decline", "Add:no kernel for a batch this large"}});
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter);
  PreBinding binding;
  const std::vector<InputShape> shapes = XwShapes(4096);
  auto made = cache.GetOrCreate(Request(g, node, ep, shapes), binding);
  ASSERT_FALSE(made.ok());
  const Status& error = made.status();
  EXPECT_EQ(error.code(), StatusCode::kUnsupported);
  for (const char* part : {"hand_made.onnx", "node 'add'", "(Add)", "domain 'ai.onnx'", "opset 17",
                           "[4096,3],[3]", "EP 'mock'", "no kernel for a batch this large",
                           "add an EP that supports it or change the input shapes"}) {
    EXPECT_NE(error.message().find(part), std::string::npos) << part << " in " << error.message();
  }
  EXPECT_EQ(error.message().find('\n'), std::string::npos);
  EXPECT_EQ(cache.stats(), CacheStats{});
  EXPECT_EQ(cache.readiness().epoch(), 0u);
  EXPECT_FALSE(binding.bound());
  EXPECT_TRUE(ep.CallsStartingWith("create_kernel").empty());
}

TEST(KernelCacheMissTest, ADeclineNamesTheNodesDomain) {
  auto ep = MakeMockEp({{"claim", "Relu"}});
  TestGraph g;
  const graph::NodeId node = g.AddNode("FusedGemm", "fused", true);
  g.graph().node(node).domain = "com.microsoft";
  SlotResetter resetter;
  KernelCache cache(resetter);
  PreBinding binding;
  const std::vector<InputShape> shapes = XwShapes(1);
  auto made = cache.GetOrCreate(Request(g, node, ep, shapes), binding);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("domain 'com.microsoft'"), std::string::npos)
      << made.status().message();
  EXPECT_NE(made.status().message().find("not told to claim FusedGemm"), std::string::npos);
}

TEST(KernelCacheMissTest, ASecondVariantAdoptsTheFirstVariantsConstants) {
  auto ep = MakeMockEp({{"share", "1"}});
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter);
  PreBinding binding;
  const std::vector<InputShape> two = XwShapes(2);
  const std::vector<InputShape> three = XwShapes(3);
  const std::vector<InputShape> four = XwShapes(4);
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, two), binding).ok());
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, three), binding).ok());
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, four), binding).ok());
  EXPECT_EQ(ep.CallsStartingWith("prepare"), std::vector<std::string>{"prepare k1 1"});
  EXPECT_EQ(ep.CallsStartingWith("adopt"),
            (std::vector<std::string>{"adopt k2 adopted", "adopt k3 adopted"}));
  // One prepared copy, shared by all three variants.
  EXPECT_EQ(MockLibrary::Get().LiveCount("shared_state"), 1);
}

TEST(KernelCacheMissTest, KernelsKeepTheWeightStoreTheyReadInPlaceAlive) {
  auto ep = MakeMockEp({{"share", "1"}});
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  const std::weak_ptr<graph::WeightStore> store = g.graph().weights;
  SlotResetter resetter;
  {
    KernelCache cache(resetter);
    PreBinding binding;
    const std::vector<InputShape> two = XwShapes(2), three = XwShapes(3);
    ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, two), binding).ok());
    ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, three), binding).ok());
    // Constants went over with bytes_persist, so the store must outlive the
    // kernels (the adopting one too), whoever else lets go of it.
    g.graph().weights.reset();
    EXPECT_FALSE(store.expired());
  }
  EXPECT_TRUE(store.expired());
}

TEST(KernelCacheMissTest, WithoutShareableConstantsEveryVariantPrepares) {
  auto ep = MakeMockEp({{"share", "0"}});
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter);
  PreBinding binding;
  const std::vector<InputShape> two = XwShapes(2);
  const std::vector<InputShape> three = XwShapes(3);
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, two), binding).ok());
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, three), binding).ok());
  EXPECT_EQ(ep.CallsStartingWith("prepare"),
            (std::vector<std::string>{"prepare k1 1", "prepare k2 1"}));
  EXPECT_TRUE(ep.CallsStartingWith("adopt").empty());
}

TEST(KernelCacheMissTest, ConstantsAreSharedPerNodeOnly) {
  auto ep = MakeMockEp({{"share", "1"}});
  TestGraph g;
  const graph::NodeId add = g.AddNode("Add", "add", true);
  const graph::NodeId mul = g.AddNode("Mul", "mul", true);
  SlotResetter resetter;
  KernelCache cache(resetter);
  PreBinding binding;
  const std::vector<InputShape> shapes = XwShapes(2);
  ASSERT_TRUE(cache.GetOrCreate(Request(g, add, ep, shapes), binding).ok());
  ASSERT_TRUE(cache.GetOrCreate(Request(g, mul, ep, shapes), binding).ok());
  EXPECT_EQ(ep.CallsStartingWith("prepare"),
            (std::vector<std::string>{"prepare k1 1", "prepare k2 1"}));
  EXPECT_TRUE(ep.CallsStartingWith("adopt").empty());
}

TEST(KernelCacheMissTest, ArmedTelemetryArmsNewKernelsThatPrepare) {
  auto ep = MakeMockEp({{"share", "0"}, {"telemetry", "logical_bytes:10"}});
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter);
  PreBinding binding;
  const std::vector<InputShape> two = XwShapes(2);
  const std::vector<InputShape> three = XwShapes(3);
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, two), binding).ok());
  auto armed = cache.ArmTelemetry(7);
  ASSERT_TRUE(armed.ok()) << armed.status().ToString();
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, three), binding).ok());
  EXPECT_EQ(ep.CallsStartingWith("telemetry_arm"),
            (std::vector<std::string>{"telemetry_arm k1 7 armed", "telemetry_arm k2 7 armed"}));
  // Armed before its capture decision, like every other preparation step.
  EXPECT_LT(ep.IndexOf("telemetry_arm k2 7 armed"), ep.IndexOf("capture_decision k2 0"));
  EXPECT_GT(ep.IndexOf("telemetry_arm k2 7 armed"), ep.IndexOf("prepare k2 1"));
}

TEST(KernelCacheMissTest, ArmedTelemetryLeavesAdoptingKernelsToTheirSibling) {
  auto ep = MakeMockEp({{"share", "1"}, {"telemetry", "logical_bytes:10"}});
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter);
  PreBinding binding;
  const std::vector<InputShape> two = XwShapes(2);
  const std::vector<InputShape> three = XwShapes(3);
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, two), binding).ok());
  ASSERT_TRUE(cache.ArmTelemetry(7).ok());
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, three), binding).ok());
  EXPECT_EQ(ep.CallsStartingWith("adopt"), std::vector<std::string>{"adopt k2 adopted"});
  EXPECT_EQ(ep.CallsStartingWith("telemetry_arm"),
            std::vector<std::string>{"telemetry_arm k1 7 armed"});
}

TEST(KernelCacheMissTest, OnlyPublicationMovesTheReadinessEpoch) {
  auto ep = MakeMockEp();
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCacheOptions options;
  options.readiness_epoch = 100;
  KernelCache cache(resetter, options);
  PreBinding binding;
  const std::vector<InputShape> two = XwShapes(2);
  const std::vector<InputShape> three = XwShapes(3);
  EXPECT_EQ(cache.readiness().epoch(), 100u);
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, two), binding).ok());
  EXPECT_EQ(cache.readiness().epoch(), 101u);
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, two), binding).ok());
  EXPECT_NE(cache.GetPrebound(binding, two), nullptr);
  EXPECT_EQ(cache.readiness().epoch(), 101u);
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, three), binding).ok());
  EXPECT_EQ(cache.readiness().epoch(), 102u);
  EXPECT_EQ(cache.stats().misses, 2u);
}

}  // namespace
}  // namespace nxrt::kernel_cache
