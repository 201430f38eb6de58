// ValueBuffer's reuse: a buffer keeps its allocation while it is large
// enough, and one outgrown takes half as much again, so a value growing a
// little each run (a KV cache) is reallocated a few times, not every run;
// the listener hears of each allocation released; a memory budget counts
// what the buffers hold; a buffer that runs stop needing shrinks back.
#include <gtest/gtest.h>

#include "executor/value_buffer.hpp"

namespace nxrt_test {
namespace {

class CountingListener : public nxrt::executor::BufferFreeListener {
 public:
  void BeforeBufferFree(const void*, size_t) override { ++frees; }
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

using nxrt::executor::ValueBuffer;
constexpr size_t kLarge = 4 << 20;
constexpr size_t kSmall = 256 << 10;

// One counted run of a buffer's owner that needs `bytes` of it.
void RunNeeding(ValueBuffer& buffer, size_t bytes, CountingListener& listener) {
  buffer.EndRun(true);
  ASSERT_TRUE(buffer.Reserve(nullptr, bytes, &listener, nullptr).ok());
  ASSERT_GE(buffer.capacity(), bytes);
}

// After a run at a large shape, runs that need at most half the capacity
// shrink the buffer once there have been enough of them in a row, to the
// largest of their needs, and the run after keeps it.
TEST(ValueBuffer, ShrinksToTheLargestNeedOfTheSlackRuns) {
  CountingListener listener;
  ValueBuffer buffer;
  RunNeeding(buffer, kLarge, listener);
  for (int run = 0; run < ValueBuffer::kSlackRunsBeforeShrink; ++run) {
    RunNeeding(buffer, run == 3 ? kSmall + 1000 : kSmall, listener);
    EXPECT_EQ(buffer.capacity(), kLarge) << "run " << run;
  }
  EXPECT_EQ(listener.frees, 0);
  buffer.EndRun(true);  // the eighth slack run closes here
  EXPECT_EQ(listener.frees, 1);
  EXPECT_EQ(buffer.capacity(), kSmall + 1000);
  const uint64_t epoch = buffer.epoch();
  RunNeeding(buffer, kSmall, listener);
  EXPECT_EQ(buffer.epoch(), epoch);
}

// A workload that comes back to its large shape now and then keeps the
// buffer: any run needing more than half the capacity starts the count anew.
TEST(ValueBuffer, AlternatingLargeAndSmallNeedsNeverShrink) {
  CountingListener listener;
  ValueBuffer buffer;
  for (int run = 0; run < 100; ++run) {
    RunNeeding(buffer, run % ValueBuffer::kSlackRunsBeforeShrink == 0 ? kLarge : kSmall, listener);
  }
  EXPECT_EQ(listener.frees, 0);
  EXPECT_EQ(buffer.capacity(), kLarge);
}

// A run that reserves nothing (its nodes settled) needed what the last
// counted run did; a run that did not complete is not counted at all.
TEST(ValueBuffer, RunsThatReserveNothingRepeatTheLastNeed) {
  CountingListener listener;
  ValueBuffer buffer;
  RunNeeding(buffer, kLarge, listener);
  for (int run = 0; run < 3 * ValueBuffer::kSlackRunsBeforeShrink; ++run) {
    buffer.EndRun(run % 2 == 0);
  }
  EXPECT_EQ(listener.frees, 0);

  RunNeeding(buffer, kSmall, listener);
  for (int run = 1; run < ValueBuffer::kSlackRunsBeforeShrink; ++run) buffer.EndRun(true);
  EXPECT_EQ(listener.frees, 0);
  buffer.EndRun(true);
  EXPECT_EQ(listener.frees, 1);
  EXPECT_EQ(buffer.capacity(), kSmall);
}

// Buffers under the floor are not worth a reallocation; one whose runs need
// nothing any more is released.
TEST(ValueBuffer, SmallBuffersStayAndUnneededOnesGo) {
  CountingListener listener;
  ValueBuffer small;
  RunNeeding(small, ValueBuffer::kShrinkFloorBytes - 1, listener);
  for (int run = 0; run < 4 * ValueBuffer::kSlackRunsBeforeShrink; ++run) {
    RunNeeding(small, 1, listener);
  }
  EXPECT_EQ(small.capacity(), ValueBuffer::kShrinkFloorBytes - 1);

  ValueBuffer unneeded;
  RunNeeding(unneeded, kLarge, listener);
  for (int run = 0; run < ValueBuffer::kSlackRunsBeforeShrink; ++run) {
    RunNeeding(unneeded, 0, listener);
  }
  unneeded.EndRun(true);
  EXPECT_EQ(unneeded.data(), nullptr);
  EXPECT_EQ(unneeded.capacity(), 0u);
  EXPECT_EQ(listener.frees, 1);
}

}  // namespace
}  // namespace nxrt_test
