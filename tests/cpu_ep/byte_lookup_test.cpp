// Byte tables (quantized/byte_lookup.hpp) and the QLinearAdd and QLinearMul
// rows that run through them (quantized/qlinear_rows.hpp): every length
// around the vector width, unaligned starts, in place, rows of every length
// against the row formula, and a table row giving the same bytes as the
// row's arithmetic, one element at a time.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "quantized/byte_lookup.hpp"
#include "quantized/qlinear_rows.hpp"
#include "quantized/saturating_round.hpp"

namespace nxrt_test {
namespace {

using nxrt::cpu::ByteLookupTable;
using nxrt::cpu::QLinearOp;
using nxrt::cpu::QLinearScales;

std::vector<uint8_t> RandomBytes(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(count);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  return bytes;
}

TEST(ByteLookup, EveryByteIsItsTableEntry) {
  ByteLookupTable table;
  const std::vector<uint8_t> entries = RandomBytes(256, 1);
  std::copy(entries.begin(), entries.end(), table.begin());
  const std::vector<uint8_t> x = RandomBytes(400, 2);
  for (int64_t start : {0, 1, 3}) {
    for (int64_t count = 0; count + start <= 300; ++count) {
      std::vector<uint8_t> y(count + 2, 0xAB);
      nxrt::cpu::LookUpBytes(table, x.data() + start, count, y.data() + 1);
      for (int64_t i = 0; i < count; ++i) {
        ASSERT_EQ(y[i + 1], table[x[start + i]]) << "count " << count << " at " << i;
      }
      ASSERT_EQ(y.front(), 0xAB);
      ASSERT_EQ(y.back(), 0xAB) << "a write past the end, count " << count;
    }
  }
  std::vector<uint8_t> in_place = x;
  nxrt::cpu::LookUpBytes(table, in_place.data(), static_cast<int64_t>(in_place.size()),
                         in_place.data());
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(in_place[i], table[x[i]]);
}

template <typename T>
void ExpectTableRowsMatchArithmetic(QLinearOp op) {
  // Scales that put results beyond both ends, so saturation is exercised.
  const QLinearScales s{3.0f, 250.0f, 7.0f, 0.71f, 1.37f, -(0.71f * 3.0f + 1.37f * 250.0f), 0.013f};
  const int64_t n = 3000;
  const std::vector<uint8_t> raw = RandomBytes(n, 3);
  const T* varying = reinterpret_cast<const T*>(raw.data());
  for (const T fixed : {T(0), T(5), T(-3), T(127)}) {
    for (const bool fixed_is_a : {false, true}) {
      std::vector<T> row(n), one(n);
      if (fixed_is_a) {
        nxrt::cpu::QLinearRow(op, s, &fixed, 0, varying, 1, n, row.data());
      } else {
        nxrt::cpu::QLinearRow(op, s, varying, 1, &fixed, 0, n, row.data());
      }
      for (int64_t i = 0; i < n; ++i) {
        if (fixed_is_a) {
          nxrt::cpu::QLinearRow(op, s, &fixed, 0, varying + i, 1, 1, &one[i]);
        } else {
          nxrt::cpu::QLinearRow(op, s, varying + i, 1, &fixed, 0, 1, &one[i]);
        }
        ASSERT_EQ(row[i], one[i]) << "element " << i << ", fixed " << int(fixed)
                                  << (fixed_is_a ? " as A" : " as B");
      }
    }
  }
}

// The row formulas of quantized/qlinear_rows.hpp, one element.
template <typename T>
T RowFormula(QLinearOp op, const QLinearScales& s, T a, T b) {
  const float x = static_cast<float>(a), y = static_cast<float>(b);
  const float v = op == QLinearOp::kAdd ? x * s.a_ratio + y * s.b_ratio + s.offset
                                        : (x - s.a_zero) * (y - s.b_zero) * s.ratio;
  return nxrt::cpu::SaturatingRound<T>(v, s.c_zero);
}

TEST(QLinearRowTest, EveryLengthFollowsTheFormula) {
  const QLinearScales s{3.0f, 250.0f, 7.0f, 0.71f, 1.37f, -(0.71f * 3.0f + 1.37f * 250.0f), 0.013f};
  const std::vector<uint8_t> a = RandomBytes(700, 4), b = RandomBytes(700, 5);
  for (const QLinearOp op : {QLinearOp::kAdd, QLinearOp::kMul}) {
    for (int64_t n = 1; n <= 600; n += n < 100 ? 1 : 37) {
      for (const int64_t b_step : {0, 1}) {
        std::vector<uint8_t> c(n + 1, 0xCD);
        nxrt::cpu::QLinearRow(op, s, a.data(), 1, b.data(), b_step, n, c.data());
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_EQ(c[i], RowFormula(op, s, a[i], b[i * b_step])) << "element " << i << " of " << n;
        }
        ASSERT_EQ(c[n], 0xCD) << "a write past the end of a row of " << n;
      }
    }
  }
}

TEST(QLinearRowTest, TheAvx2FormGivesTheSameBits) {
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "this CPU has no AVX2";
  const QLinearScales s{3.0f, 250.0f, 7.0f, 0.71f, 1.37f, -(0.71f * 3.0f + 1.37f * 250.0f), 0.013f};
  const std::vector<uint8_t> a = RandomBytes(700, 6), b = RandomBytes(700, 7);
  for (const QLinearOp op : {QLinearOp::kAdd, QLinearOp::kMul}) {
    for (int64_t n = 1; n <= 500; n += n < 100 ? 1 : 37) {
      for (const int64_t a_step : {0, 1}) {
        std::vector<uint8_t> row(n), avx2(n);
        nxrt::cpu::QLinearRow(op, s, a.data(), a_step, b.data(), 1, n, row.data());
        nxrt::cpu::QLinearRowAvx2(op, s, a.data(), a_step, b.data(), 1, n, avx2.data());
        ASSERT_EQ(row, avx2) << "a row of " << n;
      }
    }
  }
}

TEST(QLinearRowTest, AddThroughItsTableIsItsArithmetic) {
  ExpectTableRowsMatchArithmetic<uint8_t>(QLinearOp::kAdd);
  ExpectTableRowsMatchArithmetic<int8_t>(QLinearOp::kAdd);
}

TEST(QLinearRowTest, MulThroughItsTableIsItsArithmetic) {
  ExpectTableRowsMatchArithmetic<uint8_t>(QLinearOp::kMul);
  ExpectTableRowsMatchArithmetic<int8_t>(QLinearOp::kMul);
}

}  // namespace
}  // namespace nxrt_test
