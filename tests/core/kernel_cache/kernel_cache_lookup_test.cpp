// Hits, misses and the pre-bound path, against the mock EP.
#include <vector>

#include <gtest/gtest.h>

#include "kernel_cache/kernel_cache.hpp"
#include "mock_ep_fixture.hpp"

namespace nxrt::kernel_cache {
namespace {

using kernel_cache_test::MakeMockEp;
using kernel_cache_test::Request;
using kernel_cache_test::SlotResetter;
using kernel_cache_test::TestGraph;
using kernel_cache_test::XwShapes;

TEST(KernelCacheLookupTest, AMissMakesTheKernelAndTheSameShapesHit) {
  auto ep = MakeMockEp();
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter);
  PreBinding binding;
  const std::vector<InputShape> shapes = XwShapes(2);

  auto first = cache.GetOrCreate(Request(g, node, ep, shapes), binding);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_NE(*first, nullptr);
  EXPECT_EQ(cache.stats(), (CacheStats{1, 0, 1, 0, 0}));
  EXPECT_EQ(ep.CallsStartingWith("claim"), std::vector<std::string>{"claim Add claimed"});
  EXPECT_EQ(ep.CallsStartingWith("create_kernel"),
            std::vector<std::string>{"create_kernel Add k1 [2,3] [3]"});

  PreBinding other_binding;
  auto second = cache.GetOrCreate(Request(g, node, ep, shapes), other_binding);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->get(), first->get());
  EXPECT_EQ(cache.stats(), (CacheStats{1, 1, 1, 0, 0}));
  EXPECT_EQ(ep.CallsStartingWith("create_kernel").size(), 1u);
  EXPECT_EQ(ep.CallsStartingWith("claim").size(), 1u);
}

TEST(KernelCacheLookupTest, NewShapesMakeANewVariant) {
  auto ep = MakeMockEp();
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter);
  PreBinding binding;
  const std::vector<InputShape> two = XwShapes(2);
  const std::vector<InputShape> five = XwShapes(5);
  auto a = cache.GetOrCreate(Request(g, node, ep, two), binding);
  auto b = cache.GetOrCreate(Request(g, node, ep, five), binding);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->get(), b->get());
  EXPECT_EQ(cache.stats(), (CacheStats{2, 0, 2, 0, 0}));
  EXPECT_EQ(ep.CallsStartingWith("create_kernel"),
            (std::vector<std::string>{"create_kernel Add k1 [2,3] [3]",
                                      "create_kernel Add k2 [5,3] [3]"}));
}

TEST(KernelCacheLookupTest, NodesOfTheSameIdInTwoGraphsGetTheirOwnKernels) {
  auto ep = MakeMockEp();
  TestGraph main_graph;
  TestGraph body;
  const graph::NodeId in_main = main_graph.AddNode("Add", "add", true);
  const graph::NodeId in_body = body.AddNode("Mul", "mul", true);
  ASSERT_EQ(in_main, in_body);
  SlotResetter resetter;
  KernelCache cache(resetter);
  PreBinding binding;
  const std::vector<InputShape> shapes = XwShapes(2);
  auto a = cache.GetOrCreate(Request(main_graph, in_main, ep, shapes), binding);
  auto b = cache.GetOrCreate(Request(body, in_body, ep, shapes), binding);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->get(), b->get());
  EXPECT_EQ(cache.stats().misses, 2u);
}

TEST(KernelCacheLookupTest, PreBoundPathServesTheBoundShapesOnly) {
  auto ep = MakeMockEp();
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter);
  PreBinding binding;
  const std::vector<InputShape> shapes = XwShapes(2);
  EXPECT_EQ(cache.GetPrebound(binding, shapes), nullptr);

  auto made = cache.GetOrCreate(Request(g, node, ep, shapes), binding);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  ASSERT_TRUE(binding.bound());
  EXPECT_TRUE(binding.key().MatchesShapes(shapes));

  EXPECT_TRUE(cache.HasPrebound(binding, shapes));
  EXPECT_EQ(cache.stats().prebind_hits, 0u);
  EXPECT_EQ(cache.GetPrebound(binding, shapes).get(), made->get());
  EXPECT_EQ(cache.GetPrebound(binding, shapes).get(), made->get());
  EXPECT_EQ(cache.stats(), (CacheStats{1, 0, 1, 2, 0}));

  const std::vector<InputShape> other = XwShapes(3);
  EXPECT_FALSE(cache.HasPrebound(binding, other));
  EXPECT_EQ(cache.GetPrebound(binding, other), nullptr);
  EXPECT_EQ(cache.stats().prebind_hits, 2u);
}

TEST(KernelCacheLookupTest, GetOrCreateRebindsToTheShapesItServed) {
  auto ep = MakeMockEp();
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter);
  PreBinding binding;
  const std::vector<InputShape> two = XwShapes(2);
  const std::vector<InputShape> seven = XwShapes(7);
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, two), binding).ok());
  auto seven_kernel = cache.GetOrCreate(Request(g, node, ep, seven), binding);
  ASSERT_TRUE(seven_kernel.ok());
  EXPECT_EQ(cache.GetPrebound(binding, two), nullptr);
  EXPECT_EQ(cache.GetPrebound(binding, seven).get(), seven_kernel->get());
  // A hit rebinds too.
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, two), binding).ok());
  EXPECT_NE(cache.GetPrebound(binding, two), nullptr);
}

TEST(KernelCacheLookupTest, HitCountsSaturateInsteadOfWrapping) {
  auto ep = MakeMockEp();
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCacheOptions options;
  options.counters.hits = UINT64_MAX;
  options.counters.prebind_hits = UINT64_MAX;
  KernelCache cache(resetter, options);
  PreBinding binding;
  const std::vector<InputShape> shapes = XwShapes(2);
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, shapes), binding).ok());
  auto hit = cache.GetOrCreate(Request(g, node, ep, shapes), binding);
  ASSERT_TRUE(hit.ok()) << hit.status().ToString();
  EXPECT_NE(cache.GetPrebound(binding, shapes), nullptr);
  EXPECT_EQ(cache.stats().hits, UINT64_MAX);
  EXPECT_EQ(cache.stats().prebind_hits, UINT64_MAX);
}

TEST(KernelCacheLookupTest, AnAbsentOptionalInputReachesThePluginAsAbsent) {
  auto ep = MakeMockEp();
  TestGraph g;
  const graph::NodeId node = g.AddNode("Clip", "clip", true, /*with_absent_input=*/true);
  SlotResetter resetter;
  KernelCache cache(resetter);
  PreBinding binding;
  const std::vector<InputShape> shapes{InputShape{{4, 3}}, InputShape{{3}}, InputShape{{}, true}};
  auto made = cache.GetOrCreate(Request(g, node, ep, shapes), binding);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(ep.CallsStartingWith("create_kernel"),
            std::vector<std::string>{"create_kernel Clip k1 [4,3] [3] []"});
  EXPECT_EQ(ep.CallsStartingWith("set_constant_inputs"),
            std::vector<std::string>{"set_constant_inputs k1 010"});
}

TEST(KernelCacheLookupTest, AShapeCountOtherThanTheInputCountIsRefused) {
  auto ep = MakeMockEp();
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter);
  PreBinding binding;
  const std::vector<InputShape> only_x{InputShape{{2, 3}}};
  auto made = cache.GetOrCreate(Request(g, node, ep, only_x), binding);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(made.status().message().find("node 'add'"), std::string::npos);
  EXPECT_EQ(cache.stats(), CacheStats{});
  EXPECT_TRUE(ep.CallsStartingWith("claim").empty());
}

}  // namespace
}  // namespace nxrt::kernel_cache
