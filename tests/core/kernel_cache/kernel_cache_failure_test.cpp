// A miss that fails anywhere leaves the cache as it was: no entry, counters
// and epoch unchanged, the half-made kernel destroyed, and the cache usable.
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_cache/kernel_cache.hpp"
#include "mock_ep_fixture.hpp"

namespace nxrt::kernel_cache {
namespace {

using kernel_cache_test::MakeMockEp;
using kernel_cache_test::MockEp;
using kernel_cache_test::MockLibrary;
using kernel_cache_test::Request;
using kernel_cache_test::SlotResetter;
using kernel_cache_test::TestGraph;
using kernel_cache_test::XwShapes;

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

struct FaultCase {
  const char* option;  // the mock's fail_<point> option
  // The fault hits the second miss, so a first variant is already cached
  // and must survive it.
  bool on_second_miss;
  const char* fault_log;
};

void PrintTo(const FaultCase& fault, std::ostream* out) {
  *out << fault.option << (fault.on_second_miss ? " on the second miss" : " on the first miss");
}

class KernelCacheFaultTest : public ::testing::TestWithParam<FaultCase> {};

TEST_P(KernelCacheFaultTest, AFailedMissChangesNothingAndTheCacheStaysUsable) {
  const FaultCase& fault = GetParam();
  auto ep = MakeMockEp({{"share", "1"}, {fault.option, fault.on_second_miss ? "2" : "1"}});
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter);
  PreBinding binding;
  const std::vector<InputShape> two = XwShapes(2);
  const std::vector<InputShape> three = XwShapes(3);

  if (fault.on_second_miss) {
    ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, two), binding).ok());
  }
  const CacheStats before = cache.stats();
  const uint64_t epoch_before = cache.readiness().epoch();
  const int64_t kernels_before = MockLibrary::Get().LiveCount("kernel");
  const PreBinding binding_before = binding;

  const std::vector<InputShape>& failing_shapes = fault.on_second_miss ? three : two;
  auto failed = cache.GetOrCreate(Request(g, node, ep, failing_shapes), binding);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("injected failure"), std::string::npos)
      << failed.status().message();
  EXPECT_FALSE(ep.CallsStartingWith(std::string("fault ") + fault.fault_log).empty());
  EXPECT_EQ(cache.stats(), before);
  EXPECT_EQ(cache.readiness().epoch(), epoch_before);
  EXPECT_EQ(MockLibrary::Get().LiveCount("kernel"), kernels_before);
  EXPECT_EQ(binding.bound(), binding_before.bound());
  EXPECT_FALSE(cache.HasPrebound(binding, failing_shapes));

  // The same shapes succeed on the next try.
  auto retried = cache.GetOrCreate(Request(g, node, ep, failing_shapes), binding);
  ASSERT_TRUE(retried.ok()) << retried.status().ToString();
  EXPECT_EQ(cache.stats().entries, before.entries + 1);
  EXPECT_EQ(cache.stats().misses, before.misses + 1);
  EXPECT_EQ(cache.readiness().epoch(), epoch_before + 1);
}

INSTANTIATE_TEST_SUITE_P(EveryPluginStep, KernelCacheFaultTest,
                         ::testing::Values(FaultCase{"fail_claim", false, "claim"},
                                           FaultCase{"fail_create_kernel", false, "create_kernel"},
                                           FaultCase{"fail_prepare", false, "prepare"},
                                           FaultCase{"fail_claim", true, "claim"},
                                           FaultCase{"fail_create_kernel", true, "create_kernel"}),
                         [](const auto& info) {
                           return std::string(info.param.option + 5) +
                                  (info.param.on_second_miss ? "_second" : "");
                         });

TEST(KernelCacheFailureTest, AFailedAdoptDestroysTheKernelAndChangesNothing) {
  auto ep = MakeMockEp({{"share", "1"}, {"fail_adopt", "1"}});
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter);
  PreBinding binding;
  const std::vector<InputShape> two = XwShapes(2);
  const std::vector<InputShape> three = XwShapes(3);
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, two), binding).ok());
  const CacheStats before = cache.stats();

  auto failed = cache.GetOrCreate(Request(g, node, ep, three), binding);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("adopting"), std::string::npos);
  EXPECT_EQ(cache.stats(), before);
  EXPECT_EQ(cache.readiness().epoch(), 1u);
  EXPECT_GE(ep.IndexOf("destroy_kernel k2"), 0);
  EXPECT_EQ(MockLibrary::Get().LiveCount("kernel"), 1);
  EXPECT_TRUE(cache.HasPrebound(binding, two));

  auto retried = cache.GetOrCreate(Request(g, node, ep, three), binding);
  ASSERT_TRUE(retried.ok()) << retried.status().ToString();
  EXPECT_EQ(ep.CallsStartingWith("adopt k3"), std::vector<std::string>{"adopt k3 adopted"});
}

TEST(KernelCacheFailureTest, AFailedPrepareDestroysTheKernel) {
  auto ep = MakeMockEp({{"fail_prepare", "1"}});
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter);
  PreBinding binding;
  const std::vector<InputShape> two = XwShapes(2);
  ASSERT_FALSE(cache.GetOrCreate(Request(g, node, ep, two), binding).ok());
  EXPECT_LT(ep.IndexOf("fault prepare 1"), ep.IndexOf("destroy_kernel k1"));
  EXPECT_GE(ep.IndexOf("fault prepare 1"), 0);
  EXPECT_EQ(MockLibrary::Get().LiveCount("kernel"), 0);
}

// The counters are checked before anything else, so an exhausted one makes
// no plugin call at all.
void ExpectRefusedBeforeAnyPluginCall(KernelCacheOptions options, const char* what) {
  auto ep = MakeMockEp();
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCache cache(resetter, options);
  PreBinding binding;
  const std::vector<InputShape> two = XwShapes(2);
  const CacheStats before = cache.stats();
  const uint64_t epoch_before = cache.readiness().epoch();
  auto refused = cache.GetOrCreate(Request(g, node, ep, two), binding);
  ASSERT_FALSE(refused.ok()) << what;
  EXPECT_EQ(refused.status().code(), StatusCode::kInternal);
  EXPECT_NE(refused.status().message().find(what), std::string::npos) << refused.status().message();
  EXPECT_EQ(cache.stats(), before);
  EXPECT_EQ(cache.readiness().epoch(), epoch_before);
  EXPECT_EQ(ep.Calls(), std::vector<std::string>{"create_ep"});
}

TEST(KernelCacheFailureTest, AnExhaustedMissCounterIsRefusedUpFront) {
  KernelCacheOptions options;
  options.counters.misses = kMax;
  ExpectRefusedBeforeAnyPluginCall(options, "miss counter");
}

TEST(KernelCacheFailureTest, AnExhaustedReadinessEpochIsRefusedUpFront) {
  KernelCacheOptions options;
  options.readiness_epoch = kMax;
  ExpectRefusedBeforeAnyPluginCall(options, "readiness epoch");
}

TEST(KernelCacheFailureTest, AnExhaustedEvictionCounterIsRefusedBeforeEvicting) {
  auto ep = MakeMockEp();
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", true);
  SlotResetter resetter;
  KernelCacheOptions options;
  options.variants_per_node = 1;
  options.counters.evictions = kMax;
  KernelCache cache(resetter, options);
  PreBinding binding;
  const std::vector<InputShape> two = XwShapes(2);
  const std::vector<InputShape> three = XwShapes(3);
  // No eviction needed yet: the full counter does not matter.
  ASSERT_TRUE(cache.GetOrCreate(Request(g, node, ep, two), binding).ok());
  const CacheStats before = cache.stats();
  auto refused = cache.GetOrCreate(Request(g, node, ep, three), binding);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("eviction counter"), std::string::npos);
  EXPECT_EQ(cache.stats(), before);
  EXPECT_EQ(resetter.calls.load(), 0);
  EXPECT_EQ(ep.CallsStartingWith("create_kernel").size(), 1u);
  EXPECT_TRUE(cache.HasPrebound(binding, two));
}

}  // namespace
}  // namespace nxrt::kernel_cache
