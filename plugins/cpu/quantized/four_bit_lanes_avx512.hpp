// Vector pieces shared by MatMulNBits' 4-bit AVX-512 forms
// (four_bit_avx512.cpp, four_bit_int8_avx512.cpp): the zero points' share
// of a column's sum, and sums of vectors' lanes. Every function needs a CPU
// with AVX-512 F, BW, VL and DQ, and a caller compiled for them.
#pragma once

#include <algorithm>
#include <cstdint>

#include "x86_intrinsics.hpp"

#include "quantized/nbits_matrix.hpp"

#define NXRT_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define NXRT_AVX512_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))

namespace nxrt::cpu::avx512 {

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

// The sums of the lanes of sums[0..3], for four at once: halves
// of the four vectors are added pairwise until each 128-bit quarter holds
// one column's four partial sums.
NXRT_AVX512 inline __m128 FourSums(const __m512 sums[4]) {
  const __m512 first = _mm512_add_ps(_mm512_shuffle_f32x4(sums[0], sums[1], 0x44),
                                     _mm512_shuffle_f32x4(sums[0], sums[1], 0xee));
  const __m512 second = _mm512_add_ps(_mm512_shuffle_f32x4(sums[2], sums[3], 0x44),
                                      _mm512_shuffle_f32x4(sums[2], sums[3], 0xee));
  __m512 quarters = _mm512_add_ps(_mm512_shuffle_f32x4(first, second, 0x88),
                                  _mm512_shuffle_f32x4(first, second, 0xdd));
  quarters = _mm512_add_ps(quarters, _mm512_permute_ps(quarters, 0x4e));
  quarters = _mm512_add_ps(quarters, _mm512_permute_ps(quarters, 0xb1));
  return _mm512_castps512_ps128(_mm512_maskz_compress_ps(0x1111, quarters));
}

NXRT_AVX512 inline void StoreFourSums(const __m512 sums[4], float* y) {
  _mm_storeu_ps(y, FourSums(sums));
}

// Where kCols neighbouring columns keep their codes and their scales.
template <int kCols>
struct ColumnRuns {
  const uint8_t* codes[kCols];
  const float* scales[kCols];
};

// The runs of columns first to first + kCols - 1 of `w`.
template <int kCols>
inline ColumnRuns<kCols> RunsFrom(const NBitsMatrix& w, int64_t first) {
  const int64_t stride = w.blocks_per_column * w.BytesPerBlock();
  ColumnRuns<kCols> runs;
  for (int c = 0; c < kCols; ++c) {
    runs.codes[c] = w.codes + (first + c) * stride;
    runs.scales[c] = w.scales + (first + c) * w.blocks_per_column;
  }
  return runs;
}

}  // namespace nxrt::cpu::avx512
