#include "quantized/four_bit_avx512.hpp"

#include <algorithm>

#include "quantized/four_bit_lanes_avx512.hpp"

namespace nxrt::cpu {
namespace {

using avx512::ColumnRuns;
using avx512::RunsFrom;
using avx512::StoreFourSums;
using avx512::ZeroTerms;

// Lane i of 64 bytes of codes, bytes 4i to 4i + 3, lies in block 4i / bytes
// of those the 64 bytes start in, for blocks of `bytes` bytes.
NXRT_AVX512 inline __m512i LaneBlocks(int64_t bytes) {
  if (bytes >= 64) return _mm512_setzero_si512();
  const int shift = __builtin_ctzll(static_cast<unsigned long long>(bytes / 4));
  return _mm512_srl_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                          _mm_cvtsi32_si128(shift));
}

// The 64 bytes of codes at `offset` of each of kCols columns times the row:
// byte multiply-adds into 32-bit lanes, each lane within one block, then
// scaled by its block's two scales into totals. `read` masks the bytes and
// `blocks` the blocks they reach: constants for every whole 64 bytes.
template <int kCols>
NXRT_AVX512_VNNI inline void AddCodes(const uint8_t* const* codes, const float* const* scales,
                                      const Int8Row& row, int64_t stride, int64_t offset,
                                      int64_t first_block, __mmask64 read, __mmask16 blocks,
                                      __m512i lane_blocks, __m512* totals) {
  const __m512i nibble = _mm512_set1_epi8(15);
  const __m512 row_scales = _mm512_permutexvar_ps(
      lane_blocks, _mm512_maskz_loadu_ps(blocks, row.scales.data() + first_block));
  const __m512i low_values = _mm512_maskz_loadu_epi8(read, row.phases.data() + offset);
  const __m512i high_values = _mm512_maskz_loadu_epi8(read, row.phases.data() + stride + offset);
#pragma GCC unroll 4
  for (int c = 0; c < kCols; ++c) {
    const __m512i bytes = _mm512_maskz_loadu_epi8(read, codes[c] + offset);
    const __m512i low = _mm512_and_si512(bytes, nibble);
    const __m512i high = _mm512_and_si512(_mm512_srli_epi16(bytes, 4), nibble);
    const __m512i dots = _mm512_dpbusd_epi32(
        _mm512_dpbusd_epi32(_mm512_setzero_si512(), low, low_values), high, high_values);
    const __m512 lane_scales = _mm512_mul_ps(
        _mm512_permutexvar_ps(lane_blocks, _mm512_maskz_loadu_ps(blocks, scales[c] + first_block)),
        row_scales);
    totals[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dots), lane_scales, totals[c]);
  }
}

// kCols columns from `column` times an int8 row, 64 bytes of codes (128
// codes) a step, the last step masked to what is left.
template <int kCols>
NXRT_AVX512_VNNI void Int8ColumnsTimesRow(const NBitsMatrix& w, const Int8Row& row, int64_t column,
                                          float* y, __m512i lane_blocks) {
  const int64_t bytes = w.BytesPerBlock();
  const int64_t stride = w.blocks_per_column * bytes;
  const int block_shift = __builtin_ctzll(static_cast<unsigned long long>(bytes));
  const ColumnRuns<kCols> runs = RunsFrom<kCols>(w, column);
  __m512 totals[kCols];
#pragma GCC unroll 4
  for (__m512& total : totals) total = _mm512_setzero_ps();
  const auto block_mask = [&](int64_t count) {
    return static_cast<__mmask16>((1u << ((count + bytes - 1) >> block_shift)) - 1);
  };
  const __mmask16 whole_blocks = block_mask(64);
  const int64_t whole = stride & ~int64_t{63};
  for (int64_t offset = 0; offset < whole; offset += 64) {
    AddCodes<kCols>(runs.codes, runs.scales, row, stride, offset, offset >> block_shift, ~0ull,
                    whole_blocks, lane_blocks, totals);
  }
  if (whole < stride) {
    const int64_t count = stride - whole;
    AddCodes<kCols>(runs.codes, runs.scales, row, stride, whole, whole >> block_shift,
                    (1ull << count) - 1, block_mask(count), lane_blocks, totals);
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

// Block `b` of `a`, [start, end), with its scale and the inverse its codes
// are scaled by: the scalar form's arithmetic (int8_row.cpp), so both give
// the same codes.
struct Int8Block {
  int64_t start, end;
  float scale, inverse;

  __mmask16 Lanes(int64_t k) const {
    return static_cast<__mmask16>(end - k >= 16 ? 0xffff : (1u << (end - k)) - 1);
  }
};

NXRT_AVX512 inline Int8Block BlockOf(const NBitsMatrix& w, const float* a, int64_t b) {
  Int8Block block{b * w.block, std::min((b + 1) * w.block, w.depth), 0.0f, 0.0f};
  __m512 largest = _mm512_setzero_ps();
  for (int64_t k = block.start; k < block.end; k += 16) {
    largest = _mm512_max_ps(largest, _mm512_abs_ps(_mm512_maskz_loadu_ps(block.Lanes(k), a + k)));
  }
  const float top = _mm512_reduce_max_ps(largest);
  block.scale = top / 127.0f;
  block.inverse = top != 0.0f ? 127.0f / top : 0.0f;
  return block;
}

// The codes of a[k .. k + 15] in `block`, zero past its end: rounded to
// nearest even, as nearbyint in the default rounding mode, and clamped.
NXRT_AVX512 inline __m512i CodesAt(const Int8Block& block, const float* a, int64_t k) {
  const __m512 scaled =
      _mm512_mul_ps(_mm512_maskz_loadu_ps(block.Lanes(k), a + k), _mm512_set1_ps(block.inverse));
  return _mm512_cvtps_epi32(
      _mm512_min_ps(_mm512_max_ps(scaled, _mm512_set1_ps(-127.0f)), _mm512_set1_ps(127.0f)));
}

// Block `b` of `a` quantized as QuantizeRow does (int8_row.hpp), sixteen
// values a step: the codes' even places to phase 0, odd to phase 1.
NXRT_AVX512 void QuantizeBlock(const NBitsMatrix& w, const float* a, int64_t b, int64_t stride,
                               Int8Row& row) {
  const Int8Block block = BlockOf(w, a, b);
  // Even places first, then odd, within each sixteen codes.
  const __m128i split = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
  __m512i sums = _mm512_setzero_si512();
  for (int64_t k = block.start; k < block.end; k += 16) {
    const __m512i codes = CodesAt(block, a, k);
    sums = _mm512_add_epi32(sums, codes);
    const __m128i places = _mm_shuffle_epi8(_mm512_cvtepi32_epi8(codes), split);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(row.phases.data() + k / 2), places);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(row.phases.data() + stride + k / 2),
                     _mm_unpackhi_epi64(places, places));
  }
  row.scales[b] = block.scale;
  row.zero_weights[b] = block.scale * static_cast<float>(_mm512_reduce_add_epi32(sums));
}

}  // namespace

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

NXRT_AVX512 void FourBitQuantizeRowAvx512(const NBitsMatrix& w, const float* a, Int8Row& row) {
  const int64_t stride = w.blocks_per_column * w.BytesPerBlock();
  for (int64_t b = 0; b < w.blocks_per_column; ++b) QuantizeBlock(w, a, b, stride, row);
}

NXRT_AVX512 void FourBitRoundThroughInt8Avx512(const NBitsMatrix& w, const float* a, float* out) {
  for (int64_t b = 0; b < w.blocks_per_column; ++b) {
    const Int8Block block = BlockOf(w, a, b);
    for (int64_t k = block.start; k < block.end; k += 16) {
      _mm512_mask_storeu_ps(
          out + k, block.Lanes(k),
          _mm512_mul_ps(_mm512_cvtepi32_ps(CodesAt(block, a, k)), _mm512_set1_ps(block.scale)));
    }
  }
}

}  // namespace nxrt::cpu
