#include "quantized/four_bit_avx512.hpp"

// GCC 12's AVX-512 headers widen from deliberately undefined registers,
// which its uninitialised-use warnings take for a mistake once inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif

#include <algorithm>

#include "quantized/int8_row.hpp"

#define NXRT_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define NXRT_AVX512_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))

namespace nxrt::cpu {
namespace {

// A column's codes are walked in groups of whole blocks, sixteen bytes (32
// codes) at a time: a group is one block, or two blocks of 16 codes (eight
// bytes each) side by side in one vector, of which the last may stand alone.
struct Groups {
  int64_t bytes;       // per group
  int64_t count;       // per column
  bool paired_blocks;  // blocks of 16 codes, two to a group
};

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

// The zero points of blocks first to first + 15 of `column`; lanes past the
// last block hold codes of no block, which the caller's masked scales zero.
NXRT_AVX512 inline __m512 SixteenZeroPoints(const NBitsMatrix& w, int64_t column, int64_t first,
                                            __mmask16 lanes) {
  if (w.float_zero_points != nullptr) {
    return _mm512_maskz_loadu_ps(lanes, w.float_zero_points + column * w.blocks_per_column + first);
  }
  if (w.packed_zero_points == nullptr) return _mm512_set1_ps(8.0f);
  // Two blocks' codes to a byte, the even block's in the low nibble.
  const int64_t row_bytes = (w.blocks_per_column + 1) / 2;
  const int64_t count = std::min<int64_t>(8, row_bytes - first / 2);
  const __m128i bytes = _mm_maskz_loadu_epi8(static_cast<__mmask16>((1u << count) - 1),
                                             w.packed_zero_points + column * row_bytes + first / 2);
  const __m128i wide = _mm_cvtepu8_epi16(bytes);
  const __m128i low = _mm_and_si128(wide, _mm_set1_epi16(15));
  const __m128i high = _mm_srli_epi16(wide, 4);
  const __m256i in_order =
      _mm256_set_m128i(_mm_unpackhi_epi16(low, high), _mm_unpacklo_epi16(low, high));
  return _mm512_cvtepi32_ps(_mm512_cvtepu16_epi32(in_order));
}

// The sum over blocks b of scale_b * zero_b * block_sum_b, sixteen blocks a
// step, for one column and one row: what the zero points take from the
// codes' product with the row.
NXRT_AVX512 inline __m512 ZeroTerms(const NBitsMatrix& w, int64_t column, const float* block_sums) {
  const float* scales = w.scales + column * w.blocks_per_column;
  __m512 terms = _mm512_setzero_ps();
  for (int64_t first = 0; first < w.blocks_per_column; first += 16) {
    const int64_t count = std::min<int64_t>(16, w.blocks_per_column - first);
    const __mmask16 lanes = static_cast<__mmask16>((1u << count) - 1);
    const __m512 scaled_sums = _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, scales + first),
                                             _mm512_maskz_loadu_ps(lanes, block_sums + first));
    terms = _mm512_fmadd_ps(scaled_sums, SixteenZeroPoints(w, column, first, lanes), terms);
  }
  return terms;
}

// y[c] = the sum of the lanes of sums[c], for four columns at once: halves
// of the four vectors are added pairwise until each 128-bit quarter holds
// one column's four partial sums.
NXRT_AVX512 inline void StoreFourSums(const __m512 sums[4], float* y) {
  const __m512 first = _mm512_add_ps(_mm512_shuffle_f32x4(sums[0], sums[1], 0x44),
                                     _mm512_shuffle_f32x4(sums[0], sums[1], 0xee));
  const __m512 second = _mm512_add_ps(_mm512_shuffle_f32x4(sums[2], sums[3], 0x44),
                                      _mm512_shuffle_f32x4(sums[2], sums[3], 0xee));
  __m512 quarters = _mm512_add_ps(_mm512_shuffle_f32x4(first, second, 0x88),
                                  _mm512_shuffle_f32x4(first, second, 0xdd));
  quarters = _mm512_add_ps(quarters, _mm512_permute_ps(quarters, 0x4e));
  quarters = _mm512_add_ps(quarters, _mm512_permute_ps(quarters, 0xb1));
  _mm_storeu_ps(y, _mm512_castps512_ps128(_mm512_maskz_compress_ps(0x1111, quarters)));
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
  const uint8_t* codes[kCols];
  const float* scales[kCols];
#pragma GCC unroll 4
  for (int c = 0; c < kCols; ++c) {
    codes[c] = w.codes + (column + c) * stride;
    scales[c] = w.scales + (column + c) * w.blocks_per_column;
  }
  __m512 totals[kRows][kCols];
#pragma GCC unroll 4
  for (auto& row : totals) {
#pragma GCC unroll 4
    for (__m512& total : row) total = _mm512_setzero_ps();
  }
  for (int64_t g = 0; g < groups.count; ++g) {
    const int64_t offset = g * groups.bytes;
    // A lone last block of 16 codes fills half the lanes.
    const bool half = kChunks == 0 && groups.paired_blocks && 2 * g + 1 == w.blocks_per_column;
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
        const Codes widened = LoadCodes(codes[c] + j, half);
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
      const __m512 scale =
          kChunks == 0 ? GroupScale(w, scales[c], g, groups) : _mm512_set1_ps(scales[c][g]);
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

// Lane i of 64 bytes of codes, bytes 4i to 4i + 3, lies in block 4i / bytes
// of those the 64 bytes start in, for blocks of `bytes` bytes.
NXRT_AVX512 inline __m512i LaneBlocks(int64_t bytes) {
  if (bytes >= 64) return _mm512_setzero_si512();
  const int shift = __builtin_ctzll(static_cast<unsigned long long>(bytes / 4));
  return _mm512_srl_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                          _mm_cvtsi32_si128(shift));
}

// The scales of the blocks `first` on in `scales`, one per lane of 64 bytes
// of codes; `blocks` of them are read.
NXRT_AVX512 inline __m512 LaneScales(const float* scales, int64_t first, int64_t blocks,
                                     __m512i lane_blocks) {
  const __mmask16 read = static_cast<__mmask16>((1u << std::min<int64_t>(blocks, 16)) - 1);
  return _mm512_permutexvar_ps(lane_blocks, _mm512_maskz_loadu_ps(read, scales + first));
}

// kCols columns from `column` times an int8 row, 64 bytes of codes (128
// codes) a step: byte multiply-adds into 32-bit lanes, each lane within one
// block, then scaled by its block's two scales.
template <int kCols>
NXRT_AVX512_VNNI void Int8ColumnsTimesRow(const NBitsMatrix& w, const Int8Row& row, int64_t column,
                                          float* y, __m512i lane_blocks) {
  const int64_t bytes = w.BytesPerBlock();
  const int64_t stride = w.blocks_per_column * bytes;
  const int8_t* low_row = row.phases.data();
  const int8_t* high_row = low_row + stride;
  const int block_shift = __builtin_ctzll(static_cast<unsigned long long>(bytes));
  const __m512i nibble = _mm512_set1_epi8(15);
  __m512 totals[kCols];
#pragma GCC unroll 4
  for (__m512& total : totals) total = _mm512_setzero_ps();
  for (int64_t offset = 0; offset < stride; offset += 64) {
    const int64_t count = std::min<int64_t>(64, stride - offset);
    const __mmask64 read = count == 64 ? ~0ull : (1ull << count) - 1;
    const int64_t first_block = offset >> block_shift;
    const int64_t blocks = (count + bytes - 1) >> block_shift;
    const __m512 row_scales = LaneScales(row.scales.data(), first_block, blocks, lane_blocks);
    const __m512i low_values = _mm512_maskz_loadu_epi8(read, low_row + offset);
    const __m512i high_values = _mm512_maskz_loadu_epi8(read, high_row + offset);
#pragma GCC unroll 4
    for (int c = 0; c < kCols; ++c) {
      const __m512i codes = _mm512_maskz_loadu_epi8(read, w.codes + (column + c) * stride + offset);
      const __m512i low = _mm512_and_si512(codes, nibble);
      const __m512i high = _mm512_and_si512(_mm512_srli_epi16(codes, 4), nibble);
      const __m512i dots = _mm512_dpbusd_epi32(
          _mm512_dpbusd_epi32(_mm512_setzero_si512(), low, low_values), high, high_values);
      const __m512 scales = _mm512_mul_ps(LaneScales(w.scales + (column + c) * w.blocks_per_column,
                                                     first_block, blocks, lane_blocks),
                                          row_scales);
      totals[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dots), scales, totals[c]);
    }
  }
#pragma GCC unroll 4
  for (int c = 0; c < kCols; ++c) {
    totals[c] = _mm512_sub_ps(totals[c], ZeroTerms(w, column + c, row.zero_weights.data()));
  }
  if constexpr (kCols == 4) {
    StoreFourSums(totals, y);
  } else {
    y[0] = _mm512_reduce_add_ps(totals[0]);
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
  switch (count) {
    case 1:
      return RowsTimesColumnRange<1, 4>(w, rows, first, last, y, y_stride);
    case 2:
      return RowsTimesColumnRange<2, 2>(w, rows, first, last, y, y_stride);
    case 3:
      return RowsTimesColumnRange<3, 2>(w, rows, first, last, y, y_stride);
    default:
      return RowsTimesColumnRange<4, 2>(w, rows, first, last, y, y_stride);
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
      const bool half = groups.paired_blocks && 2 * g + 1 == w.blocks_per_column;
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

bool FourBitInt8RowAvx512Serves(const NBitsMatrix& w) {
  static const bool vnni =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vnni");
  return vnni && TakesInt8Rows(w);
}

NXRT_AVX512_VNNI void FourBitInt8RowTimesColumnsAvx512(const NBitsMatrix& w, const Int8Row& row,
                                                       int64_t first, int64_t last, float* y) {
  const __m512i lane_blocks = LaneBlocks(w.BytesPerBlock());
  int64_t n = first;
  for (; n + 4 <= last; n += 4) Int8ColumnsTimesRow<4>(w, row, n, y + n - first, lane_blocks);
  for (; n < last; ++n) Int8ColumnsTimesRow<1>(w, row, n, y + n - first, lane_blocks);
}

}  // namespace nxrt::cpu
