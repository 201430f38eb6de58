// The pre-bound path allocates nothing: every global operator new of this
// test program is counted, and a steady-state GetPrebound loop must not add
// to the count.
#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_cache/kernel_cache.hpp"
#include "mock_ep_fixture.hpp"

namespace {

std::atomic<uint64_t> allocations{0};

void* CountedAllocate(std::size_t size, std::size_t alignment) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (size == 0) size = 1;
  void* ptr = nullptr;
  if (alignment <= alignof(std::max_align_t)) {
    ptr = std::malloc(size);
  } else {
    ptr = std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  }
  return ptr;
}

// Out of line, so the compiler does not pair a free here with an operator
// new it inlined elsewhere.
[[gnu::noinline]] void Release(void* ptr) noexcept {
  std::free(ptr);
}

}  // namespace

void* operator new(std::size_t size) {
  if (void* ptr = CountedAllocate(size, 0)) return ptr;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* ptr = CountedAllocate(size, 0)) return ptr;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, std::align_val_t alignment) {
  if (void* ptr = CountedAllocate(size, static_cast<std::size_t>(alignment))) return ptr;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
  if (void* ptr = CountedAllocate(size, static_cast<std::size_t>(alignment))) return ptr;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return CountedAllocate(size, 0);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return CountedAllocate(size, 0);
}
void operator delete(void* ptr) noexcept {
  Release(ptr);
}
void operator delete[](void* ptr) noexcept {
  Release(ptr);
}
void operator delete(void* ptr, std::size_t) noexcept {
  Release(ptr);
}
void operator delete[](void* ptr, std::size_t) noexcept {
  Release(ptr);
}
void operator delete(void* ptr, std::align_val_t) noexcept {
  Release(ptr);
}
void operator delete[](void* ptr, std::align_val_t) noexcept {
  Release(ptr);
}
void operator delete(void* ptr, std::size_t, std::align_val_t) noexcept {
  Release(ptr);
}
void operator delete[](void* ptr, std::size_t, std::align_val_t) noexcept {
  Release(ptr);
}

namespace nxrt::kernel_cache {
namespace {

using kernel_cache_test::MakeMockEp;
using kernel_cache_test::Request;
using kernel_cache_test::SlotResetter;
using kernel_cache_test::TestGraph;
using kernel_cache_test::XwShapes;

TEST(PreboundAllocationTest, TheCountingAllocatorSeesAllocations) {
  const uint64_t before = allocations.load();
  void* probe = ::operator new(64);
  ::operator delete(probe);
  EXPECT_EQ(allocations.load() - before, 1u);
}

TEST(PreboundAllocationTest, SteadyStatePreboundLookupsAllocateNothing) {
  auto ep = MakeMockEp();
  TestGraph g;
  const graph::NodeId add = g.AddNode("Add", "add", true);
  const graph::NodeId mul = g.AddNode("Mul", "mul", true);
  SlotResetter resetter;
  KernelCache cache(resetter);
  // Several variants per node, so the lookup has to pick among them.
  std::vector<PreBinding> bindings(2);
  for (int64_t batch : {3, 2, 1}) {
    const std::vector<InputShape> shapes = XwShapes(batch);
    ASSERT_TRUE(cache.GetOrCreate(Request(g, add, ep, shapes), bindings[0]).ok());
    ASSERT_TRUE(cache.GetOrCreate(Request(g, mul, ep, shapes), bindings[1]).ok());
  }
  // The executor's shape scratch, filled once and reused every step.
  std::vector<InputShape> scratch = XwShapes(1);
  constexpr int kSteps = 10000;
  uint64_t served = 0;

  const uint64_t before = allocations.load();
  for (int step = 0; step < kSteps; ++step) {
    for (PreBinding& binding : bindings) {
      if (cache.GetPrebound(binding, scratch) != nullptr) ++served;
    }
    (void)cache.HasPrebound(bindings[0], scratch);
  }
  const uint64_t during = allocations.load() - before;

  EXPECT_EQ(during, 0u);
  EXPECT_EQ(served, 2u * kSteps);
  EXPECT_EQ(cache.stats().prebind_hits, 2u * kSteps);
}

}  // namespace
}  // namespace nxrt::kernel_cache
