// Kernels that serve other shapes (ABI 1.3): one entry stands for every
// shape of its ranks, a new shape of those ranks is a hit, the counters say
// so, and the variants it stands for leave after the device graphs reset.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_cache/kernel_cache.hpp"
#include "mock_ep_fixture.hpp"

namespace nxrt::kernel_cache {
namespace {

using kernel_cache_test::Bound;
using kernel_cache_test::MakeMockEp;
using kernel_cache_test::Request;
using kernel_cache_test::SlotResetter;
using kernel_cache_test::TestGraph;
using kernel_cache_test::XwShapes;

TEST(ShapeGeneralKernelTest, OneKernelServesEveryShapeOfItsRanks) {
  auto ep = MakeMockEp({{"any_shape", "1"}});
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter, Bound(2));
  PreBinding binding;
  std::vector<KernelRef> kernels;
  for (int64_t batch = 1; batch <= 20; ++batch) {
    const std::vector<InputShape> shapes = XwShapes(batch);
    auto kernel = cache.GetOrCreate(Request(g, node, ep, shapes), binding);
    ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
    kernels.push_back(*kernel);
    EXPECT_TRUE(cache.HasPrebound(binding, shapes));
  }
  for (const KernelRef& kernel : kernels) EXPECT_EQ(kernel, kernels.front());
  EXPECT_EQ(ep.CallsStartingWith("create_kernel").size(), 1u);
  // One kernel held, counted as serving any shape; 19 new shapes were hits.
  EXPECT_EQ(cache.stats(), (CacheStats{1, 19, 1, 0, 0, 1}));
  EXPECT_EQ(resetter.calls.load(), 0);
}

TEST(ShapeGeneralKernelTest, OtherRanksGetTheirOwnKernel) {
  auto ep = MakeMockEp({{"any_shape", "1"}});
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter, Bound(4));
  PreBinding binding;
  const std::vector<InputShape> matrix = XwShapes(2);
  const std::vector<InputShape> cube = {InputShape{{2, 2, 3}, false}, InputShape{{3}, false}};
  const std::vector<InputShape> vector = {InputShape{{3}, false}, InputShape{{3}, false}};
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, matrix), binding).ok());
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, cube), binding).ok());
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, vector), binding).ok());
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, XwShapes(7)), binding).ok());
  EXPECT_EQ(ep.CallsStartingWith("create_kernel").size(), 3u);
  EXPECT_EQ(cache.stats(), (CacheStats{3, 1, 3, 0, 0, 3}));
}

TEST(ShapeGeneralKernelTest, ShapeSpecificKernelsKeepEveryRuleOfTheBound) {
  auto ep = MakeMockEp();
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter, Bound(2));
  PreBinding binding;
  for (int64_t batch = 1; batch <= 5; ++batch) {
    ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, XwShapes(batch)), binding).ok());
  }
  EXPECT_EQ(ep.CallsStartingWith("create_kernel").size(), 5u);
  EXPECT_EQ(cache.stats(), (CacheStats{2, 0, 5, 0, 3, 0}));
  EXPECT_EQ(resetter.calls.load(), 3);
}

TEST(ShapeGeneralKernelTest, AKernelServingOtherShapesDisplacesTheVariantsItStandsFor) {
  auto ep = MakeMockEp({{"any_shape_from", "3"}});
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter, Bound(4));
  PreBinding binding;
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, XwShapes(1)), binding).ok());
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, XwShapes(2)), binding).ok());
  EXPECT_EQ(cache.stats(), (CacheStats{2, 0, 2, 0, 0, 0}));
  // The third kernel serves every shape: the two variants leave, after the
  // device graphs that may have captured them are reset.
  auto general = cache.GetOrCreate(Request(g, node, ep, XwShapes(3)), binding);
  ASSERT_TRUE(general.ok()) << general.status().ToString();
  EXPECT_EQ(cache.stats(), (CacheStats{1, 0, 3, 0, 2, 1}));
  EXPECT_EQ(resetter.calls.load(), 1);
  // Every shape of its ranks now finds it, the displaced ones among them.
  for (int64_t batch : {1, 2, 9}) {
    auto kernel = cache.GetOrCreate(Request(g, node, ep, XwShapes(batch)), binding);
    ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
    EXPECT_EQ(*kernel, *general) << "batch " << batch;
  }
  EXPECT_EQ(ep.CallsStartingWith("create_kernel").size(), 3u);
  EXPECT_EQ(cache.stats(), (CacheStats{1, 3, 3, 0, 2, 1}));
  EXPECT_EQ(resetter.calls.load(), 1);
}

}  // namespace
}  // namespace nxrt::kernel_cache
