// The int8-activation product of MatMulNBits (quantized/int8_row.hpp): its
// AVX2 form against its portable one bit for bit, and the form this CPU
// chooses (AVX-512 VNNI's where it has it) and the portable one against the
// integer sums written out here, over block sizes, zero point forms, partial
// last blocks and an odd column count (the AVX2 form takes columns in pairs,
// the VNNI one in fours).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "quantized/int8_row.hpp"

namespace nxrt_test {
namespace {

using nxrt::cpu::Int8Row;
using nxrt::cpu::NBitsMatrix;

struct Case {
  int64_t block;
  bool packed_zero_points;
};

class Int8RowTest : public ::testing::TestWithParam<Case> {};

TEST_P(Int8RowTest, BothFormsGiveTheSameBitsAndTheIntegerSums) {
  const Case c = GetParam();
  const int64_t n = 37, k = 3 * c.block + 8;
  std::mt19937 random(7);
  NBitsMatrix w;
  w.columns = n;
  w.depth = k;
  w.bits = 4;
  w.block = c.block;
  w.blocks_per_column = (k + c.block - 1) / c.block;
  std::vector<uint8_t> codes(static_cast<size_t>(n * w.blocks_per_column * w.BytesPerBlock()));
  for (uint8_t& byte : codes) byte = static_cast<uint8_t>(random() & 0xff);
  std::vector<float> scales(static_cast<size_t>(n * w.blocks_per_column));
  std::uniform_real_distribution<float> positive(0.01f, 0.1f);
  for (float& s : scales) s = positive(random);
  const int64_t zero_bytes = (w.blocks_per_column * 4 + 7) / 8;
  std::vector<uint8_t> zeros(static_cast<size_t>(n * zero_bytes));
  for (uint8_t& byte : zeros) byte = static_cast<uint8_t>(random() & 0xff);
  w.codes = codes.data();
  w.scales = scales.data();
  w.packed_zero_points = c.packed_zero_points ? zeros.data() : nullptr;

  std::vector<float> a(static_cast<size_t>(k));
  std::normal_distribution<float> normal;
  for (float& v : a) v = normal(random);
  Int8Row row;
  nxrt::cpu::QuantizeRow(w, a.data(), row);

  std::vector<float> chosen(static_cast<size_t>(n)), portable(static_cast<size_t>(n));
  nxrt::cpu::Int8RowTimesColumns(w, row, 0, n, chosen.data());
  nxrt::cpu::Int8RowTimesColumnsPortable(w, row, 0, n, portable.data());
  if (__builtin_cpu_supports("avx2")) {
    std::vector<float> avx2(static_cast<size_t>(n));
    nxrt::cpu::Int8RowTimesColumnsAvx2(w, row, 0, n, avx2.data());
    EXPECT_EQ(std::memcmp(avx2.data(), portable.data(), avx2.size() * sizeof(float)), 0);
  }

  // The row's int8 codes from its phase order (element k at place k % 2 of
  // byte k / 2), and the sums in double.
  const int64_t stride = w.blocks_per_column * w.BytesPerBlock();
  for (int64_t col = 0; col < n; ++col) {
    double want = 0.0;
    for (int64_t kk = 0; kk < k; ++kk) {
      const int64_t b = kk / c.block;
      const uint8_t byte = codes[static_cast<size_t>(col * stride + kk / 2)];
      const int code = kk % 2 == 0 ? byte & 15 : byte >> 4;
      const int zero =
          c.packed_zero_points
              ? (zeros[static_cast<size_t>(col * zero_bytes + b / 2)] >> (b % 2 * 4)) & 15
              : 8;
      const int8_t a_code = row.phases[static_cast<size_t>((kk % 2) * stride + kk / 2)];
      want += static_cast<double>(scales[static_cast<size_t>(col * w.blocks_per_column + b)]) *
              row.scales[static_cast<size_t>(b)] * (code - zero) * a_code;
    }
    EXPECT_NEAR(chosen[static_cast<size_t>(col)], want, 1e-4 * (1.0 + std::fabs(want)))
        << "column " << col;
    EXPECT_NEAR(portable[static_cast<size_t>(col)], want, 1e-4 * (1.0 + std::fabs(want)))
        << "column " << col;
  }
}

// The row's codes, scales and zero weights, and the values rounded through
// int8, against the rule written out here: per block scale = max|a| / 127
// and codes round(a * 127 / max|a|), ties to even, even places in phase 0
// and odd in phase 1, zero past K.
TEST_P(Int8RowTest, TheRowIsQuantizedByTheRule) {
  const Case c = GetParam();
  NBitsMatrix w;
  w.bits = 4;
  w.block = c.block;
  for (const int64_t k : {3 * c.block + 8, 2 * c.block + 5, c.block}) {
    w.depth = k;
    w.blocks_per_column = (k + c.block - 1) / c.block;
    std::mt19937 random(static_cast<unsigned>(k));
    std::normal_distribution<float> normal;
    std::vector<float> a(static_cast<size_t>(k));
    for (float& v : a) v = normal(random);
    // Block 0 scales by exactly 1/2, so 5 and 7 sit at halves (2.5 -> 2,
    // 3.5 -> 4); a block of zeros where there are two blocks or more.
    a[0] = 254.0f;
    a[1] = 5.0f;
    a[2] = 7.0f;
    if (w.blocks_per_column > 1) std::fill_n(a.begin() + c.block, c.block, 0.0f);
    Int8Row row;
    nxrt::cpu::QuantizeRow(w, a.data(), row);
    std::vector<float> rounded(static_cast<size_t>(k));
    nxrt::cpu::RoundThroughInt8(w, a.data(), rounded.data());
    const int64_t stride = w.blocks_per_column * w.BytesPerBlock();
    ASSERT_EQ(row.phases.size(), static_cast<size_t>(2 * stride));
    for (int64_t b = 0; b < w.blocks_per_column; ++b) {
      const int64_t end = std::min((b + 1) * c.block, k);
      float largest = 0.0f;
      for (int64_t i = b * c.block; i < end; ++i) largest = std::max(largest, std::fabs(a[i]));
      const float inverse = largest != 0.0f ? 127.0f / largest : 0.0f;
      int sum = 0;
      for (int64_t i = b * c.block; i < (b + 1) * c.block; ++i) {
        const int want =
            i < k ? static_cast<int>(std::clamp(std::nearbyint(a[i] * inverse), -127.0f, 127.0f))
                  : 0;
        sum += want;
        EXPECT_EQ(row.phases[static_cast<size_t>((i % 2) * stride + i / 2)], want)
            << "K " << k << ", element " << i;
        if (i < k) {
          EXPECT_EQ(rounded[static_cast<size_t>(i)], static_cast<float>(want) * (largest / 127.0f))
              << "K " << k << ", element " << i << " through int8";
        }
      }
      EXPECT_EQ(row.scales[static_cast<size_t>(b)], largest / 127.0f)
          << "K " << k << ", block " << b;
      EXPECT_EQ(row.zero_weights[static_cast<size_t>(b)],
                largest / 127.0f * static_cast<float>(sum))
          << "K " << k << ", block " << b;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Blocks, Int8RowTest,
                         ::testing::Values(Case{16, true}, Case{16, false}, Case{32, true},
                                           Case{32, false}, Case{64, true}, Case{128, false},
                                           Case{256, true}));

}  // namespace
}  // namespace nxrt_test
