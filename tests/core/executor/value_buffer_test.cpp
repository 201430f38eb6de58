// ValueBuffer's reuse: a buffer keeps its allocation while it is large
// enough, and one outgrown takes half as much again, so a value growing a
// little each run (a KV cache) is reallocated a few times, not every run;
// the listener hears of each allocation released.
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
  ASSERT_TRUE(buffer.Reserve(nullptr, 1000, &listener).ok());
  EXPECT_EQ(buffer.capacity(), 1000u);
  void* const data = buffer.data();
  const uint64_t epoch = buffer.epoch();
  ASSERT_TRUE(buffer.Reserve(nullptr, 600, &listener).ok());
  EXPECT_EQ(buffer.data(), data);
  EXPECT_EQ(buffer.epoch(), epoch);
  EXPECT_EQ(listener.frees, 0);
}

TEST(ValueBuffer, AGrowingValueReallocatesGeometrically) {
  CountingListener listener;
  nxrt::executor::ValueBuffer buffer;
  ASSERT_TRUE(buffer.Reserve(nullptr, 4096, &listener).ok());
  uint64_t epoch = buffer.epoch();
  int reallocations = 0;
  // 1,000 runs, each 4 KiB larger than the last.
  for (size_t bytes = 8192; bytes <= 4096 * 1000; bytes += 4096) {
    ASSERT_TRUE(buffer.Reserve(nullptr, bytes, &listener).ok());
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

}  // namespace
}  // namespace nxrt_test
