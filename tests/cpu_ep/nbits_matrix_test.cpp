// MatMulNBits' float forms (quantized/nbits_matrix.hpp): a few rows times
// the codes, and columns dequantized for the panels, against sums written
// out here in double, over bit widths, block sizes (blocks of 16 codes pair
// up in the AVX-512 form, and an odd count leaves one alone), zero point
// forms, partial last blocks, one to seventeen rows and a column count
// that leaves a remainder after groups of four and of two.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "quantized/four_bit_avx512.hpp"
#include "quantized/nbits_matrix.hpp"

namespace nxrt_test {
namespace {

using nxrt::cpu::NBitsMatrix;
using nxrt::cpu::NBitsRow;

enum class Zeros { kNone, kPacked, kFloat };

struct Case {
  int bits;
  int64_t block;
  int64_t depth;
  Zeros zeros;
};

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  const char* zeros = c.zeros == Zeros::kNone     ? "None"
                      : c.zeros == Zeros::kPacked ? "Packed"
                                                  : "Float";
  return "Bits" + std::to_string(c.bits) + "Block" + std::to_string(c.block) + "K" +
         std::to_string(c.depth) + zeros;
}

// A random matrix of Case's form, owning what `w` points at.
struct RandomMatrix {
  NBitsMatrix w;
  std::vector<uint8_t> codes, packed_zeros;
  std::vector<float> scales, float_zeros;

  RandomMatrix(const Case& c, int64_t columns, std::mt19937& random) {
    w.columns = columns;
    w.depth = c.depth;
    w.bits = c.bits;
    w.block = c.block;
    w.blocks_per_column = (c.depth + c.block - 1) / c.block;
    const int64_t blocks = columns * w.blocks_per_column;
    codes.resize(static_cast<size_t>(blocks * w.BytesPerBlock()));
    for (uint8_t& byte : codes) byte = static_cast<uint8_t>(random() & 0xff);
    std::uniform_real_distribution<float> positive(0.01f, 0.1f);
    scales.resize(static_cast<size_t>(blocks));
    for (float& s : scales) s = positive(random);
    w.codes = codes.data();
    w.scales = scales.data();
    if (c.zeros == Zeros::kPacked) {
      packed_zeros.resize(static_cast<size_t>(columns * ((w.blocks_per_column * c.bits + 7) / 8)));
      for (uint8_t& byte : packed_zeros) byte = static_cast<uint8_t>(random() & 0xff);
      w.packed_zero_points = packed_zeros.data();
    } else if (c.zeros == Zeros::kFloat) {
      std::uniform_real_distribution<float> zero(0.0f, static_cast<float>((1 << c.bits) - 1));
      float_zeros.resize(static_cast<size_t>(blocks));
      for (float& z : float_zeros) z = zero(random);
      w.float_zero_points = float_zeros.data();
    }
  }

  // W(n, k) as the specification defines it, from the codes' bytes.
  double Weight(int64_t n, int64_t k) const {
    const int per_byte = 8 / w.bits;
    const int64_t b = k / w.block;
    const int64_t stride = w.blocks_per_column * w.BytesPerBlock();
    const uint8_t byte = codes[static_cast<size_t>(n * stride + k / per_byte)];
    const int code = (byte >> ((k % per_byte) * w.bits)) & ((1 << w.bits) - 1);
    double zero = static_cast<double>(1 << (w.bits - 1));
    if (w.float_zero_points != nullptr) {
      zero = float_zeros[static_cast<size_t>(n * w.blocks_per_column + b)];
    } else if (w.packed_zero_points != nullptr) {
      const int64_t row_bytes = (w.blocks_per_column * w.bits + 7) / 8;
      const uint8_t zero_byte = packed_zeros[static_cast<size_t>(n * row_bytes + b / per_byte)];
      zero = (zero_byte >> ((b % per_byte) * w.bits)) & ((1 << w.bits) - 1);
    }
    return (code - zero) * scales[static_cast<size_t>(n * w.blocks_per_column + b)];
  }
};

class NBitsMatrixTest : public ::testing::TestWithParam<Case> {};

TEST_P(NBitsMatrixTest, RowsTimesColumnsMatchTheSumsInDouble) {
  const Case c = GetParam();
  const int64_t columns = 38;  // 37 from column 1: odd, and not a multiple of four
  std::mt19937 random(11);
  const RandomMatrix m(c, columns, random);
  std::normal_distribution<float> normal;
  // Up to four rows go a pass each on AVX-512, eight a pass from eight on.
  for (int count : {1, 2, 3, 4, 5, 8, 9, 13, 17}) {
    std::vector<std::vector<float>> a(static_cast<size_t>(count));
    std::vector<NBitsRow> rows(static_cast<size_t>(count));
    for (int r = 0; r < count; ++r) {
      a[r].resize(static_cast<size_t>(c.depth));
      for (float& v : a[r]) v = normal(random);
      nxrt::cpu::PrepareRow(m.w, a[r].data(), rows[r]);
    }
    // Columns from 1, so a run that does not start at 0 is covered too,
    // and for nine rows a run of one column.
    const int64_t first = count == 9 ? columns - 1 : 1;
    // Rows of y back to back, so a write past a row's last column lands on
    // the next row's first.
    const int64_t width = columns - first;
    std::vector<float> y(static_cast<size_t>(count * width), -1.0f);
    nxrt::cpu::RowsTimesColumns(m.w, rows.data(), count, first, columns, y.data(), width);
    for (int r = 0; r < count; ++r) {
      for (int64_t n = first; n < columns; ++n) {
        double want = 0.0, size = 0.0;
        for (int64_t k = 0; k < c.depth; ++k) {
          const double term = a[r][static_cast<size_t>(k)] * m.Weight(n, k);
          want += term;
          size += std::fabs(term);
        }
        EXPECT_NEAR(y[static_cast<size_t>(r * width + n - first)], want, 1e-5 * (1.0 + size))
            << count << " rows, row " << r << ", column " << n;
      }
    }
  }
}

TEST_P(NBitsMatrixTest, DequantizedColumnsAreTheWeightsInPhaseOrder) {
  const Case c = GetParam();
  const int64_t columns = 9;
  std::mt19937 random(5);
  const RandomMatrix m(c, columns, random);
  const int64_t length = nxrt::cpu::PhaseOrderLength(m.w);
  const int64_t first = 2;
  std::vector<float> out(static_cast<size_t>((columns - first) * length));
  nxrt::cpu::DequantizeColumns(m.w, first, columns, out.data());
  const int per_byte = 8 / c.bits;
  const int64_t stride = m.w.blocks_per_column * m.w.BytesPerBlock();
  for (int64_t n = first; n < columns; ++n) {
    for (int64_t k = 0; k < c.depth; ++k) {
      const float got =
          out[static_cast<size_t>((n - first) * length + (k % per_byte) * stride + k / per_byte)];
      EXPECT_FLOAT_EQ(got, static_cast<float>(m.Weight(n, k))) << "column " << n << ", k " << k;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Forms, NBitsMatrixTest,
    ::testing::Values(Case{4, 16, 56, Zeros::kPacked}, Case{4, 16, 80, Zeros::kNone},
                      Case{4, 16, 80, Zeros::kFloat}, Case{4, 32, 104, Zeros::kPacked},
                      Case{4, 32, 512, Zeros::kNone}, Case{4, 32, 1056, Zeros::kFloat},
                      Case{4, 64, 200, Zeros::kPacked}, Case{4, 128, 392, Zeros::kFloat},
                      Case{4, 256, 776, Zeros::kPacked}, Case{2, 32, 104, Zeros::kPacked},
                      Case{8, 32, 104, Zeros::kFloat}),
    CaseName);

// Where this CPU has AVX-512, the cases above ran its 4-bit form.
TEST(NBitsMatrix, FourBitCodesTakeTheAvx512FormWhereTheCpuHasIt) {
  NBitsMatrix w;
  w.bits = 4;
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  EXPECT_EQ(nxrt::cpu::FourBitAvx512Serves(w), avx512);
  w.bits = 8;
  EXPECT_FALSE(nxrt::cpu::FourBitAvx512Serves(w));
}

}  // namespace
}  // namespace nxrt_test
