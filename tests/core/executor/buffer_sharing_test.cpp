// Buffer assignment from value lifetimes: values whose lifetimes never
// overlap share a buffer, any overlap (a node's input and output included)
// keeps them apart, and a value without a lifetime has a buffer of its own.
#include "executor/buffer_sharing.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace nxrt::executor {
namespace {

using Lives = std::vector<std::optional<Lifetime>>;

TEST(AssignBuffers, AChainAlternatesBetweenTwoBuffers) {
  // v0 -> v1 -> v2 -> v3 -> v4: each node reads the last value and makes the next.
  const Lives lives = {Lifetime{0, 1}, Lifetime{1, 2}, Lifetime{2, 3}, Lifetime{3, 4},
                       Lifetime{4, 4}};
  const BufferAssignment a = AssignBuffers(lives);
  EXPECT_EQ(a.buffer_count, 2u);
  EXPECT_EQ(a.buffer_of_value, (std::vector<size_t>{0, 1, 0, 1, 0}));
}

TEST(AssignBuffers, AValueReadLaterKeepsItsBufferUntilThen) {
  // v0 is read by the node at 3, so v1 and v2 cannot take its buffer.
  const Lives lives = {Lifetime{0, 3}, Lifetime{1, 2}, Lifetime{2, 3}, Lifetime{4, 5}};
  const BufferAssignment a = AssignBuffers(lives);
  EXPECT_NE(a.buffer_of_value[0], a.buffer_of_value[1]);
  EXPECT_NE(a.buffer_of_value[0], a.buffer_of_value[2]);
  EXPECT_NE(a.buffer_of_value[1], a.buffer_of_value[2]);
  EXPECT_EQ(a.buffer_count, 3u);
  // v3 comes after them all and reuses one.
  EXPECT_LT(a.buffer_of_value[3], 3u);
}

TEST(AssignBuffers, OutputsOfOneNodeNeverShare) {
  const Lives lives = {Lifetime{2, 2}, Lifetime{2, 5}, Lifetime{2, 3}};
  const BufferAssignment a = AssignBuffers(lives);
  EXPECT_EQ(a.buffer_count, 3u);
}

TEST(AssignBuffers, ValuesWithoutALifetimeHaveTheirOwn) {
  const Lives lives = {std::nullopt, Lifetime{0, 0}, std::nullopt, Lifetime{1, 1}};
  const BufferAssignment a = AssignBuffers(lives);
  EXPECT_EQ(a.buffer_count, 3u);
  EXPECT_NE(a.buffer_of_value[0], a.buffer_of_value[2]);
  EXPECT_EQ(a.buffer_of_value[1], a.buffer_of_value[3]);
  EXPECT_NE(a.buffer_of_value[0], a.buffer_of_value[1]);
  EXPECT_NE(a.buffer_of_value[2], a.buffer_of_value[1]);
}

TEST(AssignBuffers, TheMostRecentlyFreedBufferIsReusedFirst) {
  // v0 dies at 1 and v1 at 2; v2 (made at 3) takes v1's buffer, still warm.
  const Lives lives = {Lifetime{0, 1}, Lifetime{1, 2}, Lifetime{3, 4}};
  const BufferAssignment a = AssignBuffers(lives);
  EXPECT_EQ(a.buffer_of_value[2], a.buffer_of_value[1]);
}

}  // namespace
}  // namespace nxrt::executor
