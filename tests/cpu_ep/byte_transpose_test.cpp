// The byte transpose between NCHW and channels-last 8-bit images
// (quantized/byte_transpose.hpp): whole 16x16 tiles, partial edges on
// either side, and matrices smaller than a tile.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "quantized/byte_transpose.hpp"

namespace nxrt_test {
namespace {

TEST(ByteTranspose, EveryByteLandsAtItsTransposedPlace) {
  for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
           {16, 16}, {32, 48}, {24, 240}, {16, 49}, {7, 5}, {1, 33}, {33, 1}, {100, 17}}) {
    std::vector<uint8_t> from(rows * cols), to(rows * cols, 0);
    for (size_t i = 0; i < from.size(); ++i) from[i] = static_cast<uint8_t>(i * 131 + i / 256);
    nxrt::cpu::TransposeBytes(from.data(), rows, cols, to.data());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        ASSERT_EQ(to[c * rows + r], from[r * cols + c])
            << rows << "x" << cols << " at " << r << "," << c;
      }
    }
  }
}

}  // namespace
}  // namespace nxrt_test
