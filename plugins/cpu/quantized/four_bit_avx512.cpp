#include "quantized/four_bit_avx512.hpp"

#include <algorithm>

#include "quantized/four_bit_lanes_avx512.hpp"

namespace nxrt::cpu {
namespace {

using avx512::ColumnRuns;
using avx512::FourSums;
using avx512::RunsFrom;
using avx512::SixteenZeroPoints;
using avx512::StoreFourSums;
using avx512::ZeroTerms;

// A column's codes are walked in groups of whole blocks, sixteen bytes (32
// codes) at a time: a group is one block, or two blocks of 16 codes (eight
// bytes each) side by side in one vector, of which the last may stand alone.
struct Groups {
  int64_t bytes;       // per group
  int64_t count;       // per column
  bool paired_blocks;  // blocks of 16 codes, two to a group
};

// Whether group `g` is a lone last block of 16 codes, filling half the lanes.
inline bool LoneHalfBlock(const NBitsMatrix& w, const Groups& groups, int64_t g) {
  return groups.paired_blocks && 2 * g + 1 == w.blocks_per_column;
}

Groups GroupsOf(const NBitsMatrix& w) {
  const int64_t bytes = w.BytesPerBlock();
  if (bytes == 8) return {16, (w.blocks_per_column + 1) / 2, true};
  return {bytes, w.blocks_per_column, false};
}

// Per lane of a group's sixteen codes: its block's scale and zero point.
struct BlockConstants {
  __m512 scale;
  __m512 zero;
};

NXRT_AVX512 inline BlockConstants ConstantsOf(const NBitsMatrix& w, int64_t column, int64_t group,
                                              const Groups& groups) {
  const float* scales = w.scales + column * w.blocks_per_column;
  if (!groups.paired_blocks) {
    return {_mm512_set1_ps(scales[group]), _mm512_set1_ps(BlockZeroPoint(w, column, group))};
  }
  const int64_t b = 2 * group, next = b + 1 < w.blocks_per_column ? b + 1 : b;
  return {_mm512_insertf32x8(_mm512_set1_ps(scales[b]), _mm256_set1_ps(scales[next]), 1),
          _mm512_insertf32x8(_mm512_set1_ps(BlockZeroPoint(w, column, b)),
                             _mm256_set1_ps(BlockZeroPoint(w, column, next)), 1)};
}

// Sixteen bytes of codes (eight when `half`, the rest zero) as two vectors:
// the low nibbles (phase 0) and the high ones (phase 1).
struct Codes {
  __m512 low;
  __m512 high;
};

NXRT_AVX512 inline Codes LoadCodes(const uint8_t* codes, bool half) {
  const __m128i bytes = half ? _mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes))
                             : _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes));
  const __m512i wide = _mm512_cvtepu8_epi32(bytes);
  return {_mm512_cvtepi32_ps(_mm512_and_si512(wide, _mm512_set1_epi32(15))),
          _mm512_cvtepi32_ps(_mm512_srli_epi32(wide, 4))};
}

// The scale of each lane's block in group `group` of `scales`, a column's.
NXRT_AVX512 inline __m512 GroupScale(const NBitsMatrix& w, const float* scales, int64_t group,
                                     const Groups& groups) {
  if (!groups.paired_blocks) return _mm512_set1_ps(scales[group]);
  const int64_t b = 2 * group, next = b + 1 < w.blocks_per_column ? b + 1 : b;
  return _mm512_insertf32x8(_mm512_set1_ps(scales[b]), _mm256_set1_ps(scales[next]), 1);
}

// kCols columns from `column` times kRows rows: per (row, column) the codes'
// products with the row, each group's sum meeting its scale once, less the
// zero points' share (ZeroTerms). Low and high phases sum apart within a
// group, so one fused multiply-add does not wait on the other. The loops
// over rows and columns are unrolled, so every sum stays in a register.
// kChunks is the sixteen-byte chunks in a group when known ahead (1 for
// blocks of 32, the common size), 0 when read from `w`.
template <int kRows, int kCols, int kChunks>
NXRT_AVX512 void ColumnsTimesRows(const NBitsMatrix& w, const NBitsRow* rows, int64_t column,
                                  float* y, int64_t y_stride) {
  const Groups groups =
      kChunks == 0 ? GroupsOf(w) : Groups{16 * kChunks, w.blocks_per_column, false};
  const int64_t stride = w.blocks_per_column * w.BytesPerBlock();
  const float* phases[kRows];
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) phases[r] = rows[r].phases.data();
  const ColumnRuns<kCols> runs = RunsFrom<kCols>(w, column);
  __m512 totals[kRows][kCols];
#pragma GCC unroll 4
  for (auto& row : totals) {
#pragma GCC unroll 4
    for (__m512& total : row) total = _mm512_setzero_ps();
  }
  for (int64_t g = 0; g < groups.count; ++g) {
    const int64_t offset = g * groups.bytes;
    const bool half = kChunks == 0 && LoneHalfBlock(w, groups, g);
    const __mmask16 lanes = half ? 0x00ff : 0xffff;
    __m512 low_sums[kRows][kCols], high_sums[kRows][kCols];
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
      for (int c = 0; c < kCols; ++c) low_sums[r][c] = high_sums[r][c] = _mm512_setzero_ps();
    }
    for (int64_t j = offset; j < offset + groups.bytes; j += 16) {
      __m512 low_row[kRows], high_row[kRows];
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        low_row[r] = _mm512_maskz_loadu_ps(lanes, phases[r] + j);
        high_row[r] = _mm512_maskz_loadu_ps(lanes, phases[r] + stride + j);
      }
#pragma GCC unroll 4
      for (int c = 0; c < kCols; ++c) {
        const Codes widened = LoadCodes(runs.codes[c] + j, half);
#pragma GCC unroll 4
        for (int r = 0; r < kRows; ++r) {
          low_sums[r][c] = _mm512_fmadd_ps(widened.low, low_row[r], low_sums[r][c]);
          // With many sums in flight the two phases share one chain, which
          // leaves registers for the rows.
          if constexpr (kRows * kCols > 4) {
            low_sums[r][c] = _mm512_fmadd_ps(widened.high, high_row[r], low_sums[r][c]);
          } else {
            high_sums[r][c] = _mm512_fmadd_ps(widened.high, high_row[r], high_sums[r][c]);
          }
        }
      }
    }
#pragma GCC unroll 4
    for (int c = 0; c < kCols; ++c) {
      const __m512 scale = kChunks == 0 ? GroupScale(w, runs.scales[c], g, groups)
                                        : _mm512_set1_ps(runs.scales[c][g]);
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        totals[r][c] =
            _mm512_fmadd_ps(_mm512_add_ps(low_sums[r][c], high_sums[r][c]), scale, totals[r][c]);
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < kCols; ++c) {
      totals[r][c] =
          _mm512_sub_ps(totals[r][c], ZeroTerms(w, column + c, rows[r].block_sums.data()));
    }
    if constexpr (kCols == 4) {
      StoreFourSums(totals[r], y + r * y_stride);
    } else {
#pragma GCC unroll 4
      for (int c = 0; c < kCols; ++c) y[r * y_stride + c] = _mm512_reduce_add_ps(totals[r][c]);
    }
  }
}

// Columns [first, last) kCols at a time, the rest one at a time. Wider
// groups of columns for fewer rows keep every sum in a register.
template <int kRows, int kCols, int kChunks>
NXRT_AVX512 void ColumnRange(const NBitsMatrix& w, const NBitsRow* rows, int64_t first,
                             int64_t last, float* y, int64_t y_stride) {
  int64_t n = first;
  for (; n + kCols <= last; n += kCols) {
    ColumnsTimesRows<kRows, kCols, kChunks>(w, rows, n, y + n - first, y_stride);
  }
  for (; n < last; ++n) ColumnsTimesRows<kRows, 1, kChunks>(w, rows, n, y + n - first, y_stride);
}

template <int kRows, int kCols>
NXRT_AVX512 void RowsTimesColumnRange(const NBitsMatrix& w, const NBitsRow* rows, int64_t first,
                                      int64_t last, float* y, int64_t y_stride) {
  if (w.block == 32) return ColumnRange<kRows, kCols, 1>(w, rows, first, last, y, y_stride);
  ColumnRange<kRows, kCols, 0>(w, rows, first, last, y, y_stride);
}

// Eight rows times two columns from `column`: each group's codes become
// weights in registers, (code - zero) * scale, and meet the eight rows
// directly, so sixteen chains of sums share one widening of the codes, and
// a product of many rows streams the codes once per eight. kChunks as in
// ColumnsTimesRows.
template <int kChunks>
NXRT_AVX512 void TwoColumnsTimesEightRows(const NBitsMatrix& w, const NBitsRow* rows,
                                          int64_t column, float* y, int64_t y_stride) {
  constexpr int kRows = 8, kCols = 2;
  const Groups groups =
      kChunks == 0 ? GroupsOf(w) : Groups{16 * kChunks, w.blocks_per_column, false};
  const int64_t stride = w.blocks_per_column * w.BytesPerBlock();
  const float* phases[kRows];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) phases[r] = rows[r].phases.data();
  const ColumnRuns<kCols> runs = RunsFrom<kCols>(w, column);
  __m512 sums[kCols][kRows];
  BlockConstants window[kCols];  // blocks g to g + 15 when kChunks is 1
#pragma GCC unroll 2
  for (auto& column_sums : sums) {
#pragma GCC unroll 8
    for (__m512& sum : column_sums) sum = _mm512_setzero_ps();
  }
  for (int64_t g = 0; g < groups.count; ++g) {
    const int64_t offset = g * groups.bytes;
    const bool half = kChunks == 0 && LoneHalfBlock(w, groups, g);
    const __mmask16 lanes = half ? 0x00ff : 0xffff;
    BlockConstants constants[kCols];
    if constexpr (kChunks == 0) {
#pragma GCC unroll 2
      for (int c = 0; c < kCols; ++c) constants[c] = ConstantsOf(w, column + c, g, groups);
    } else {
      // One block a group: sixteen blocks' scales and zero points are read
      // as vectors, and each group broadcasts its lane of them.
      if (g % 16 == 0) {
        const __mmask16 blocks =
            static_cast<__mmask16>((1u << std::min<int64_t>(16, w.blocks_per_column - g)) - 1);
#pragma GCC unroll 2
        for (int c = 0; c < kCols; ++c) {
          window[c].scale = _mm512_maskz_loadu_ps(blocks, runs.scales[c] + g);
          window[c].zero = SixteenZeroPoints(w, column + c, g, blocks);
        }
      }
      const __m512i lane = _mm512_set1_epi32(static_cast<int>(g % 16));
#pragma GCC unroll 2
      for (int c = 0; c < kCols; ++c) {
        constants[c] = {_mm512_permutexvar_ps(lane, window[c].scale),
                        _mm512_permutexvar_ps(lane, window[c].zero)};
      }
    }
    for (int64_t j = offset; j < offset + groups.bytes; j += 16) {
#pragma GCC unroll 2
      for (int c = 0; c < kCols; ++c) {
        const Codes codes = LoadCodes(runs.codes[c] + j, half);
        const __m512 low =
            _mm512_mul_ps(_mm512_sub_ps(codes.low, constants[c].zero), constants[c].scale);
        const __m512 high =
            _mm512_mul_ps(_mm512_sub_ps(codes.high, constants[c].zero), constants[c].scale);
#pragma GCC unroll 8
        for (int r = 0; r < kRows; ++r) {
          sums[c][r] =
              _mm512_fmadd_ps(low, _mm512_maskz_loadu_ps(lanes, phases[r] + j), sums[c][r]);
          sums[c][r] = _mm512_fmadd_ps(high, _mm512_maskz_loadu_ps(lanes, phases[r] + stride + j),
                                       sums[c][r]);
        }
      }
    }
  }
#pragma GCC unroll 2
  for (int c = 0; c < kCols; ++c) {
#pragma GCC unroll 2
    for (int r = 0; r < kRows; r += 4) {
      float four[4];
      _mm_storeu_ps(four, FourSums(sums[c] + r));
#pragma GCC unroll 4
      for (int i = 0; i < 4; ++i) y[(r + i) * y_stride + c] = four[i];
    }
  }
}

// Columns [first, last) of eight rows, two at a time; an odd last column
// is computed twice in place of the one before it.
template <int kChunks>
NXRT_AVX512 void EightRowsTimesColumnRange(const NBitsMatrix& w, const NBitsRow* rows,
                                           int64_t first, int64_t last, float* y,
                                           int64_t y_stride) {
  for (int64_t n = first; n < last; n += 2) {
    const int64_t pair = std::min(n, last - 2);
    TwoColumnsTimesEightRows<kChunks>(w, rows, pair, y + pair - first, y_stride);
  }
}

}  // namespace

bool FourBitAvx512Serves(const NBitsMatrix& w) {
  static const bool avx512 =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  return avx512 && w.bits == 4 && StreamsInBlocks(w);
}

NXRT_AVX512 void FourBitRowsTimesColumnsAvx512(const NBitsMatrix& w, const NBitsRow* rows,
                                               int count, int64_t first, int64_t last, float* y,
                                               int64_t y_stride) {
  int r = 0;
  if (last - first >= 2) {
    for (; r + 8 <= count; r += 8) {
      if (w.block == 32) {
        EightRowsTimesColumnRange<1>(w, rows + r, first, last, y + r * y_stride, y_stride);
      } else {
        EightRowsTimesColumnRange<0>(w, rows + r, first, last, y + r * y_stride, y_stride);
      }
    }
  }
  for (; r < count; r += 4) {
    float* out = y + r * y_stride;
    switch (std::min(count - r, 4)) {
      case 1:
        RowsTimesColumnRange<1, 4>(w, rows + r, first, last, out, y_stride);
        break;
      case 2:
        RowsTimesColumnRange<2, 2>(w, rows + r, first, last, out, y_stride);
        break;
      case 3:
        RowsTimesColumnRange<3, 2>(w, rows + r, first, last, out, y_stride);
        break;
      default:
        RowsTimesColumnRange<4, 2>(w, rows + r, first, last, out, y_stride);
    }
  }
}

NXRT_AVX512 void FourBitDequantizeColumnsAvx512(const NBitsMatrix& w, int64_t first, int64_t last,
                                                float* out) {
  const Groups groups = GroupsOf(w);
  const int64_t stride = w.blocks_per_column * w.BytesPerBlock();
  for (int64_t n = first; n < last; ++n) {
    const uint8_t* column = w.codes + n * stride;
    float* low_out = out + (n - first) * 2 * stride;
    float* high_out = low_out + stride;
    for (int64_t g = 0; g < groups.count; ++g) {
      const bool half = LoneHalfBlock(w, groups, g);
      const __mmask16 lanes = half ? 0x00ff : 0xffff;
      const BlockConstants constants = ConstantsOf(w, n, g, groups);
      for (int64_t j = g * groups.bytes; j < (g + 1) * groups.bytes; j += 16) {
        const Codes widened = LoadCodes(column + j, half);
        _mm512_mask_storeu_ps(
            low_out + j, lanes,
            _mm512_mul_ps(_mm512_sub_ps(widened.low, constants.zero), constants.scale));
        _mm512_mask_storeu_ps(
            high_out + j, lanes,
            _mm512_mul_ps(_mm512_sub_ps(widened.high, constants.zero), constants.scale));
      }
    }
  }
}

}  // namespace nxrt::cpu
