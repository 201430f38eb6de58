// ValueBuffer's reuse: a buffer keeps its allocation while it is large
// enough, and one outgrown takes half as much again, so a value growing a
// little each run (a KV cache) is reallocated a few times, not every run;
// the listener hears of each allocation released; a memory budget counts
// what the buffers hold.
#include <gtest/gtest.h>

#include "executor/value_buffer.hpp"

namespace nxrt_test {
namespace {

class CountingListener : public nxrt::executor::BufferFreeListener {
 public:
  void BeforeBufferFree() override { ++frees; }
  int frees = 0;
};

TEST(ValueBuffer, KeepsAnAllocationLargeEnough) {
  CountingListener listener;
  nxrt::executor::ValueBuffer buffer;
  ASSERT_TRUE(buffer.Reserve(nullptr, 1000, &listener, nullptr).ok());
  EXPECT_EQ(buffer.capacity(), 1000u);
  void* const data = buffer.data();
  const uint64_t epoch = buffer.epoch();
  ASSERT_TRUE(buffer.Reserve(nullptr, 600, &listener, nullptr).ok());
  EXPECT_EQ(buffer.data(), data);
  EXPECT_EQ(buffer.epoch(), epoch);
  EXPECT_EQ(listener.frees, 0);
}

TEST(ValueBuffer, AGrowingValueReallocatesGeometrically) {
  CountingListener listener;
  nxrt::executor::ValueBuffer buffer;
  ASSERT_TRUE(buffer.Reserve(nullptr, 4096, &listener, nullptr).ok());
  uint64_t epoch = buffer.epoch();
  int reallocations = 0;
  // 1,000 runs, each 4 KiB larger than the last.
  for (size_t bytes = 8192; bytes <= 4096 * 1000; bytes += 4096) {
    ASSERT_TRUE(buffer.Reserve(nullptr, bytes, &listener, nullptr).ok());
    ASSERT_GE(buffer.capacity(), bytes);
    if (buffer.epoch() != epoch) {
      ++reallocations;
      epoch = buffer.epoch();
    }
  }
  // Growth by half again from 4 KiB reaches 4 MB in 17 steps.
  EXPECT_LE(reallocations, 17);
  EXPECT_EQ(listener.frees, reallocations);
}

// A budget counts what its buffers hold, gets it back as they release it,
// and refuses what would pass its limit before anything is allocated.
TEST(ValueBuffer, ABudgetCountsWhatItsBuffersHold) {
  nxrt::executor::MemoryBudget budget;
  budget.set_limit(10000);
  nxrt::executor::ValueBuffer a, b;
  ASSERT_TRUE(a.Reserve(nullptr, 4000, nullptr, &budget).ok());
  ASSERT_TRUE(b.Reserve(nullptr, 5000, nullptr, &budget).ok());
  EXPECT_EQ(budget.held(), 9000u);

  const nxrt::Status refused = a.Reserve(nullptr, 6000, nullptr, &budget);
  EXPECT_EQ(refused.code(), nxrt::StatusCode::kOutOfMemory);
  EXPECT_NE(refused.message().find("memory limit"), std::string::npos) << refused.message();
  EXPECT_EQ(a.data(), nullptr);  // its old allocation went back first
  EXPECT_EQ(budget.held(), 5000u);

  b.Release();
  EXPECT_EQ(budget.held(), 0u);
  ASSERT_TRUE(a.Reserve(nullptr, 6000, nullptr, &budget).ok());
  nxrt::executor::ValueBuffer moved = std::move(a);
  moved.Release();
  EXPECT_EQ(budget.held(), 0u);
}

// An outgrown buffer that has no room to take half as much again takes
// just what was asked.
TEST(ValueBuffer, GrowthStopsAtWhatTheBudgetHasRoomFor) {
  nxrt::executor::MemoryBudget budget;
  budget.set_limit(5000);
  nxrt::executor::ValueBuffer buffer;
  ASSERT_TRUE(buffer.Reserve(nullptr, 4000, nullptr, &budget).ok());
  ASSERT_TRUE(buffer.Reserve(nullptr, 4500, nullptr, &budget).ok());
  EXPECT_EQ(buffer.capacity(), 4500u);
  EXPECT_EQ(budget.held(), 4500u);
}

}  // namespace
}  // namespace nxrt_test
