// Several executor threads dispatching at once: lookups, misses and
// evictions on the same and on different nodes. Run under ThreadSanitizer
// (the tsan preset) to check the locking, and everywhere for the counts.
#include <atomic>
#include <thread>
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

TEST(KernelCacheConcurrencyTest, ThreadsHammeringSharedAndOwnShapesKeepTheCountsExact) {
  auto ep = MakeMockEp({{"share", "1"}, {"telemetry", "logical_bytes:1"}});
  TestGraph g;
  const graph::NodeId shared_node = g.AddNode("Add", "shared", true);
  constexpr int kThreads = 4;
  std::vector<graph::NodeId> own_nodes;
  for (int t = 0; t < kThreads; ++t) {
    own_nodes.push_back(g.AddNode("Mul", "own" + std::to_string(t), true));
  }
  SlotResetter resetter;
  KernelCacheOptions options;
  options.variants_per_node = 3;
  KernelCache cache(resetter, options);

  constexpr int kRounds = 300;
  std::atomic<uint64_t> get_or_create_calls{0};
  std::atomic<uint64_t> prebound_served{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      PreBinding shared_binding;
      PreBinding own_binding;
      for (int round = 0; round < kRounds; ++round) {
        // The shared node cycles through five shapes with a bound of three,
        // keeping each for three rounds: threads evict each other's variants
        // while others are served the same node through the pre-bound path.
        // The own node mostly repeats one shape.
        const std::vector<InputShape> shared_shapes = XwShapes(1 + (round / 3 + t) % 5);
        const std::vector<InputShape> own_shapes = XwShapes(round % 50 == 0 ? 2 + round : 1);
        for (const auto& [node, shapes, binding] :
             {std::tuple{shared_node, &shared_shapes, &shared_binding},
              std::tuple{own_nodes[t], &own_shapes, &own_binding}}) {
          if (KernelRef kernel = cache.GetPrebound(*binding, *shapes)) {
            prebound_served.fetch_add(1);
            if (!binding->key().MatchesShapes(*shapes)) failures.fetch_add(1);
            continue;
          }
          get_or_create_calls.fetch_add(1);
          auto kernel = cache.GetOrCreate(Request(g, node, ep, *shapes), *binding);
          if (!kernel.ok() || *kernel == nullptr) failures.fetch_add(1);
        }
        if (t == 0 && round == kRounds / 2) {
          if (!cache.ArmTelemetry(5).ok()) failures.fetch_add(1);
        }
        (void)cache.stats();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  EXPECT_EQ(failures.load(), 0);
  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.hits + stats.misses, get_or_create_calls.load());
  EXPECT_EQ(stats.prebind_hits, prebound_served.load());
  EXPECT_EQ(stats.entries, stats.misses - stats.evictions);
  EXPECT_LE(stats.entries, (kThreads + 1) * options.variants_per_node);
  EXPECT_GT(stats.evictions, 0u);
  EXPECT_GT(stats.prebind_hits, 0u);
  EXPECT_EQ(resetter.calls.load(), static_cast<int>(stats.evictions));
  EXPECT_EQ(MockLibrary::Get().LiveCount("kernel"), static_cast<int64_t>(stats.entries));
  EXPECT_EQ(cache.readiness().epoch(), stats.misses);
}

TEST(KernelCacheConcurrencyTest, ThreadsMissingTheSameShapesAtOnceMakeOneKernel) {
  auto ep = MakeMockEp();
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter);
  constexpr int kThreads = 6;
  const std::vector<InputShape> shapes = XwShapes(8);
  std::atomic<int> waiting{kThreads};
  std::vector<KernelRef> kernels(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Start together, so the misses overlap.
      waiting.fetch_sub(1);
      while (waiting.load() > 0) std::this_thread::yield();
      PreBinding binding;
      auto kernel = cache.GetOrCreate(Request(g, node, ep, shapes), binding);
      if (kernel.ok()) kernels[t] = *kernel;
    });
  }
  for (std::thread& thread : threads) thread.join();

  for (const KernelRef& kernel : kernels) {
    ASSERT_NE(kernel, nullptr);
    EXPECT_EQ(kernel.get(), kernels[0].get());
  }
  EXPECT_EQ(cache.stats(), (CacheStats{1, kThreads - 1, 1, 0, 0}));
  EXPECT_EQ(ep.CallsStartingWith("create_kernel").size(), 1u);
  EXPECT_EQ(ep.CallsStartingWith("claim").size(), 1u);
}

}  // namespace
}  // namespace nxrt::kernel_cache
