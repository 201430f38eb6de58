// The per-node bound: least recently used variants leave, after both
// device-graph slots are reset, and memory stays bounded however many shapes
// a node sees.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_cache/kernel_cache.hpp"
#include "mock_ep_fixture.hpp"
#include "plugin_host/compute_context.hpp"

namespace nxrt::kernel_cache {
namespace {

using kernel_cache_test::Bound;
using kernel_cache_test::MakeMockEp;
using kernel_cache_test::MockLibrary;
using kernel_cache_test::Request;
using kernel_cache_test::SlotResetter;
using kernel_cache_test::TestGraph;
using kernel_cache_test::XwShapes;

TEST(KernelCacheEvictionTest, TheLeastRecentlyUsedVariantLeaves) {
  auto ep = MakeMockEp();
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter, Bound(2));
  PreBinding a_binding, b_binding, c_binding;
  const std::vector<InputShape> a = XwShapes(2);
  const std::vector<InputShape> b = XwShapes(3);
  const std::vector<InputShape> c = XwShapes(4);
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, a), a_binding).ok());  // k1
  const void* evicted = nullptr;
  {
    auto k2 = cache.GetOrCreate(Request(g, node, ep, b), b_binding);
    ASSERT_TRUE(k2.ok());
    evicted = k2->get();
  }
  // A was made first but used last.
  ASSERT_NE(cache.GetPrebound(a_binding, a), nullptr);
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, c), c_binding).ok());  // k3
  // Only the captures that ran the evicted kernel need resetting.
  EXPECT_EQ(resetter.named, std::vector<const void*>{evicted});

  EXPECT_EQ(cache.stats(), (CacheStats{2, 0, 3, 1, 1}));
  EXPECT_GE(ep.IndexOf("destroy_kernel k2"), 0);
  EXPECT_EQ(ep.IndexOf("destroy_kernel k1"), -1);
  EXPECT_TRUE(cache.HasPrebound(a_binding, a));
  EXPECT_FALSE(cache.HasPrebound(b_binding, b));
  EXPECT_EQ(cache.GetPrebound(b_binding, b), nullptr);
  EXPECT_EQ(resetter.calls.load(), 1);

  // A hit through GetOrCreate also counts as use: C is now the oldest.
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, a), a_binding).ok());
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, b), b_binding).ok());  // k4
  EXPECT_GE(ep.IndexOf("destroy_kernel k3"), 0);
  EXPECT_TRUE(cache.HasPrebound(a_binding, a));
}

TEST(KernelCacheEvictionTest, ABindingWhoseKernelWasRemadeReachesTheNewKernel) {
  auto ep = MakeMockEp();
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter, Bound(1));
  PreBinding kept, other;
  const std::vector<InputShape> a = XwShapes(2);
  const std::vector<InputShape> b = XwShapes(3);
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, a), kept).ok());   // k1
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, b), other).ok());  // k2 evicts k1
  EXPECT_EQ(cache.GetPrebound(kept, a), nullptr);
  Result<KernelRef> remade = cache.GetOrCreate(Request(g, node, ep, a), other);  // k3 evicts k2
  ASSERT_TRUE(remade.ok());

  // `kept` was bound to the erased k1; it still names node and shapes of k3.
  EXPECT_EQ(cache.GetPrebound(kept, a).get(), remade->get());
  EXPECT_EQ(cache.GetPrebound(other, a).get(), remade->get());
  EXPECT_EQ(cache.GetPrebound(other, b), nullptr);
  EXPECT_EQ(cache.stats().prebind_hits, 2u);
}

TEST(KernelCacheEvictionTest, TheBoundIsPerNode) {
  auto ep = MakeMockEp();
  TestGraph g;
  const graph::NodeId add = g.AddNode("Add", "add", true);
  const graph::NodeId mul = g.AddNode("Mul", "mul", true);
  SlotResetter resetter;
  KernelCache cache(resetter, Bound(2));
  PreBinding binding;
  for (int64_t batch = 1; batch <= 2; ++batch) {
    const std::vector<InputShape> shapes = XwShapes(batch);
    ASSERT_TRUE(cache.GetOrCreate(Request(g, add, ep, shapes), binding).ok());
    ASSERT_TRUE(cache.GetOrCreate(Request(g, mul, ep, shapes), binding).ok());
  }
  EXPECT_EQ(cache.stats().entries, 4u);
  EXPECT_EQ(cache.stats().evictions, 0u);
  EXPECT_EQ(resetter.calls.load(), 0);
}

// Compute services for a call recorded into a capture: recording never asks
// the host for anything.
class NoServices : public plugin_host::ComputeServices {
 public:
  Status AllocateOutput(size_t, nxrt_dtype, std::span<const int64_t>, nxrt_tensor*) override {
    return Unsupported("not during capture");
  }
  Status AllocateSequenceOutput(size_t, size_t) override { return Unsupported("not here"); }
  Status AllocateSequenceElement(size_t, size_t, nxrt_dtype, std::span<const int64_t>,
                                 nxrt_tensor*) override {
    return Unsupported("not here");
  }
  Status SetOutputNone(size_t) override { return Unsupported("not here"); }
  Status SetStringElement(size_t, size_t, std::string_view) override {
    return Unsupported("not here");
  }
  Status RunSubgraph(std::string_view, std::span<const nxrt_value>,
                     std::span<nxrt_value>) override {
    return Unsupported("not here");
  }
};

nxrt_value FloatTensor(std::vector<int64_t>& dims, std::vector<float>& data) {
  nxrt_value value{};
  value.struct_size = sizeof(value);
  value.kind = NXRT_VALUE_TENSOR;
  value.tensor =
      nxrt_tensor{sizeof(nxrt_tensor), NXRT_DTYPE_FLOAT32, NXRT_MEMORY_HOST,           dims.size(),
                  dims.data(),         data.data(),        data.size() * sizeof(float)};
  return value;
}

TEST(KernelCacheEvictionTest, BothSlotsAreResetBeforeAnEvictedKernelDies) {
  auto ep = MakeMockEp();
  ASSERT_TRUE(ep.provider->has_device_graphs());
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  resetter.provider = ep.provider.get();
  KernelCache cache(resetter, Bound(1));
  PreBinding binding;
  const std::vector<InputShape> two = XwShapes(2);
  const std::vector<InputShape> three = XwShapes(3);
  auto kernel = cache.GetOrCreate(Request(g, node, ep, two), binding);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();

  // Capture k1 into the Primary slot, and an empty graph into Verify.
  std::vector<int64_t> x_dims{2, 3}, w_dims{3}, y_dims{2, 3};
  std::vector<float> x(6, 1.0f), w(3, 2.0f), y(6, 0.0f);
  const std::vector<nxrt_value> inputs{FloatTensor(x_dims, x), FloatTensor(w_dims, w)};
  std::vector<nxrt_value> outputs{FloatTensor(y_dims, y)};
  NoServices services;
  ASSERT_TRUE(ep.provider->BeginCapture(NXRT_GRAPH_SLOT_PRIMARY).ok());
  ASSERT_TRUE((*kernel)->Compute(services, inputs, outputs).ok());
  auto primary = ep.provider->EndCapture(NXRT_GRAPH_SLOT_PRIMARY);
  ASSERT_TRUE(primary.ok()) << primary.status().ToString();
  ASSERT_TRUE(ep.provider->BeginCapture(NXRT_GRAPH_SLOT_VERIFY).ok());
  auto verify = ep.provider->EndCapture(NXRT_GRAPH_SLOT_VERIFY);
  ASSERT_TRUE(verify.ok()) << verify.status().ToString();
  resetter.primary = *primary;
  resetter.verify = *verify;
  ASSERT_GE(ep.IndexOf("record k1"), 0);
  kernel->reset();

  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, three), binding).ok());
  const auto reset_primary = ep.IndexOf("reset t" + std::to_string(*primary));
  const auto reset_verify = ep.IndexOf("reset t" + std::to_string(*verify));
  const auto destroy = ep.IndexOf("destroy_kernel k1");
  ASSERT_GE(reset_primary, 0);
  ASSERT_GE(reset_verify, 0);
  ASSERT_GE(destroy, 0);
  EXPECT_LT(reset_primary, destroy);
  EXPECT_LT(reset_verify, destroy);
  EXPECT_EQ(ep.provider->live_graph_count(), 0u);
  EXPECT_EQ(cache.stats().evictions, 1u);
}

TEST(KernelCacheEvictionTest, AFailedResetKeepsEveryVariantAndDropsTheNewOne) {
  auto ep = MakeMockEp();
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  resetter.fail_with = Unavailable("the device was lost");
  KernelCache cache(resetter, Bound(1));
  PreBinding binding;
  const std::vector<InputShape> two = XwShapes(2);
  const std::vector<InputShape> three = XwShapes(3);
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, two), binding).ok());
  const CacheStats before = cache.stats();

  auto failed = cache.GetOrCreate(Request(g, node, ep, three), binding);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(failed.status().message().find("the device was lost"), std::string::npos);
  EXPECT_NE(failed.status().message().find("node 'add'"), std::string::npos);
  EXPECT_EQ(cache.stats(), before);
  EXPECT_EQ(cache.readiness().epoch(), 1u);
  EXPECT_GE(ep.IndexOf("destroy_kernel k2"), 0);
  EXPECT_EQ(ep.IndexOf("destroy_kernel k1"), -1);
  EXPECT_TRUE(cache.HasPrebound(binding, two));

  resetter.fail_with = Status::Ok();
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, three), binding).ok());
  EXPECT_EQ(cache.stats().evictions, 1u);
  EXPECT_GE(ep.IndexOf("destroy_kernel k1"), 0);
}

TEST(KernelCacheEvictionTest, APluginResetFaultKeepsEveryVariant) {
  auto ep = MakeMockEp({{"fail_reset", "1"}});
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  resetter.provider = ep.provider.get();
  KernelCache cache(resetter, Bound(1));
  PreBinding binding;
  const std::vector<InputShape> two = XwShapes(2);
  const std::vector<InputShape> three = XwShapes(3);
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, two), binding).ok());
  ASSERT_TRUE(ep.provider->BeginCapture(NXRT_GRAPH_SLOT_PRIMARY).ok());
  auto token = ep.provider->EndCapture(NXRT_GRAPH_SLOT_PRIMARY);
  ASSERT_TRUE(token.ok());
  resetter.primary = *token;
  const CacheStats before = cache.stats();

  auto failed = cache.GetOrCreate(Request(g, node, ep, three), binding);
  ASSERT_FALSE(failed.ok());
  EXPECT_GE(ep.IndexOf("fault reset 1"), 0);
  EXPECT_EQ(cache.stats(), before);
  EXPECT_EQ(MockLibrary::Get().LiveCount("kernel"), 1);
  EXPECT_TRUE(cache.HasPrebound(binding, two));
}

TEST(KernelCacheEvictionTest, ConstantsOutliveTheVariantThatPreparedThem) {
  auto ep = MakeMockEp({{"share", "1"}});
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter, Bound(1));
  PreBinding binding;
  for (int64_t batch = 1; batch <= 3; ++batch) {
    const std::vector<InputShape> shapes = XwShapes(batch);
    ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, shapes), binding).ok());
  }
  EXPECT_GE(ep.IndexOf("destroy_kernel k1"), 0);
  EXPECT_EQ(ep.CallsStartingWith("prepare"), std::vector<std::string>{"prepare k1 1"});
  EXPECT_EQ(ep.CallsStartingWith("adopt"),
            (std::vector<std::string>{"adopt k2 adopted", "adopt k3 adopted"}));
  EXPECT_EQ(MockLibrary::Get().LiveCount("shared_state"), 1);
}

TEST(KernelCacheEvictionTest, AThousandShapesStayWithinTheBound) {
  auto ep = MakeMockEp();
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  constexpr size_t kBound = 4;
  constexpr int64_t kShapes = 1000;
  KernelCache cache(resetter, Bound(kBound));
  PreBinding binding;
  for (int64_t batch = 1; batch <= kShapes; ++batch) {
    const std::vector<InputShape> shapes = XwShapes(batch);
    auto made = cache.GetOrCreate(Request(g, node, ep, shapes), binding);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    ASSERT_LE(cache.stats().entries, kBound);
  }
  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.entries, kBound);
  EXPECT_EQ(stats.misses, static_cast<uint64_t>(kShapes));
  EXPECT_EQ(stats.evictions, static_cast<uint64_t>(kShapes) - kBound);
  EXPECT_EQ(resetter.calls.load(), static_cast<int>(kShapes - kBound));
  EXPECT_EQ(MockLibrary::Get().LiveCount("kernel"), static_cast<int64_t>(kBound));
  // The newest shapes survive.
  for (int64_t batch = kShapes - static_cast<int64_t>(kBound) + 1; batch <= kShapes; ++batch) {
    const std::vector<InputShape> shapes = XwShapes(batch);
    ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, shapes), binding).ok());
  }
  EXPECT_EQ(cache.stats().hits, kBound);
  EXPECT_EQ(cache.stats().misses, static_cast<uint64_t>(kShapes));
}

TEST(KernelCacheEvictionTest, AZeroBoundKeepsOneVariant) {
  auto ep = MakeMockEp();
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter, Bound(0));
  EXPECT_EQ(cache.variants_per_node(), 1u);
  PreBinding binding;
  const std::vector<InputShape> two = XwShapes(2);
  auto made = cache.GetOrCreate(Request(g, node, ep, two), binding);
  ASSERT_TRUE(made.ok());
  EXPECT_EQ(cache.GetPrebound(binding, two).get(), made->get());
}

}  // namespace
}  // namespace nxrt::kernel_cache
