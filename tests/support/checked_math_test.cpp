#include "nxrt/support/checked_math.hpp"

#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

namespace nxrt {
namespace {

TEST(CheckedMathTest, DetectsOverflow) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(CheckedAdd<int64_t>(2, 3), 5);
  EXPECT_FALSE(CheckedAdd<int64_t>(kMax, 1));
  EXPECT_FALSE(CheckedMul<int64_t>(kMax / 2 + 1, 2));
  EXPECT_EQ(CheckedMul<uint64_t>(1ULL << 31, 1ULL << 31), 1ULL << 62);
  EXPECT_FALSE(CheckedSub<uint64_t>(0, 1));
}

}  // namespace
}  // namespace nxrt
