#include "quantized/int8_row.hpp"

#include <algorithm>
#include <cmath>

#include "quantized/four_bit_avx512.hpp"
#include "x86_intrinsics.hpp"

namespace nxrt::cpu {
namespace {

// A block's dot products, in four partial sums: lane l takes bytes l * 4 to
// l * 4 + 3 of every sixteen, as pmaddwd leaves them, so both forms below
// add the same integers in the same float order. Low codes meet phase 0 of
// the row, high codes phase 1 (`stride` further on); `bytes` is a multiple
// of 8.
using Dots = int32_t[4];

// A column's sum over blocks b of weight scale_b * (row scale_b * dot_b -
// zero_b * zero_weight_b): the dots' four lanes added last in a fixed order,
// less the zero terms, summed apart.
inline float ColumnSum(const float lanes[4], float zero_terms) {
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) - zero_terms;
}

// pmaddubsw multiplies unsigned bytes (the codes) by signed ones (the row)
// and adds neighbouring pairs into 16 bits: at most 2 * 15 * 127 per pair,
// two such sums per lane before pmaddwd widens them. The low half of each
// register holds one column, the high half the next, against the same row.
__attribute__((target("avx2"))) inline __m256i AddCodeDots(__m256i sums, __m256i codes,
                                                           __m256i low_row, __m256i high_row) {
  const __m256i nibble = _mm256_set1_epi8(15);
  const __m256i low = _mm256_and_si256(codes, nibble);
  const __m256i high = _mm256_and_si256(_mm256_srli_epi16(codes, 4), nibble);
  const __m256i pairs =
      _mm256_add_epi16(_mm256_maddubs_epi16(low, low_row), _mm256_maddubs_epi16(high, high_row));
  return _mm256_add_epi32(sums, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
}

// Bytes `bytes` (16, or 8 of a block of 16) from each of two places, one per
// half.
__attribute__((target("avx2"))) inline __m256i LoadPair(const void* low, const void* high,
                                                        int64_t bytes) {
  const auto load = [](const void* p, int64_t count) __attribute__((target("avx2"))) {
    return count == 16 ? _mm_loadu_si128(static_cast<const __m128i*>(p))
                       : _mm_loadl_epi64(static_cast<const __m128i*>(p));
  };
  return _mm256_inserti128_si256(_mm256_castsi128_si256(load(low, bytes)), load(high, bytes), 1);
}

// The same `bytes` bytes in both halves.
__attribute__((target("avx2"))) inline __m256i LoadBoth(const void* p, int64_t bytes) {
  return bytes == 16 ? _mm256_broadcastsi128_si256(_mm_loadu_si128(static_cast<const __m128i*>(p)))
                     : _mm256_broadcastq_epi64(_mm_loadl_epi64(static_cast<const __m128i*>(p)));
}

// Columns two at a time, an odd last one paired with itself.
__attribute__((target("avx2"))) void ColumnsAvx2(const NBitsMatrix& w, const Int8Row& row,
                                                 int64_t first, int64_t last, float* y) {
  const int64_t bytes = w.BytesPerBlock();
  const int64_t stride = w.blocks_per_column * bytes;
  for (int64_t n = first; n < last; n += 2) {
    const int64_t m = std::min(n + 1, last - 1);
    const uint8_t* columns[2] = {w.codes + n * stride, w.codes + m * stride};
    const float* scales[2] = {w.scales + n * w.blocks_per_column,
                              w.scales + m * w.blocks_per_column};
    __m256 lanes = _mm256_setzero_ps();
    float zero_terms[2] = {0.0f, 0.0f};
    for (int64_t b = 0; b < w.blocks_per_column; ++b) {
      const int8_t* phases = row.phases.data() + b * bytes;
      __m256i dots = _mm256_setzero_si256();
      for (int64_t j = 0; j < bytes; j += 16) {
        const int64_t count = std::min<int64_t>(16, bytes - j);
        dots = AddCodeDots(dots,
                           LoadPair(columns[0] + b * bytes + j, columns[1] + b * bytes + j, count),
                           LoadBoth(phases + j, count), LoadBoth(phases + stride + j, count));
      }
      const float scale0 = scales[0][b] * row.scales[b];
      const float scale1 = scales[1][b] * row.scales[b];
      lanes = _mm256_add_ps(
          lanes, _mm256_mul_ps(_mm256_cvtepi32_ps(dots),
                               _mm256_set_m128(_mm_set1_ps(scale1), _mm_set1_ps(scale0))));
    }
    for (int64_t b = 0; b < w.blocks_per_column; ++b) {
      zero_terms[0] += scales[0][b] * BlockZeroPoint(w, n, b) * row.zero_weights[b];
      zero_terms[1] += scales[1][b] * BlockZeroPoint(w, m, b) * row.zero_weights[b];
    }
    float sums[8];
    _mm256_storeu_ps(sums, lanes);
    y[n - first] = ColumnSum(sums, zero_terms[0]);
    if (m != n) y[m - first] = ColumnSum(sums + 4, zero_terms[1]);
  }
}

// Block `b` of `a`: its scale, and 1 / scale (0 for a block of zeros).
struct BlockScale {
  float scale;
  float inverse;
};
BlockScale ScaleOfBlock(const NBitsMatrix& w, const float* a, int64_t b) {
  const int64_t start = b * w.block, end = std::min(start + w.block, w.depth);
  float largest = 0.0f;
  for (int64_t k = start; k < end; ++k) largest = std::max(largest, std::fabs(a[k]));
  // 127 / largest rather than 1 / scale: the two differ in the last bit,
  // which moves codes that sit near a half, and ONNX Runtime takes this one.
  return {largest / 127.0f, largest != 0.0f ? 127.0f / largest : 0.0f};
}

int8_t Int8Code(float value, float inverse) {
  return static_cast<int8_t>(std::clamp(std::nearbyint(value * inverse), -127.0f, 127.0f));
}

}  // namespace

void QuantizeRow(const NBitsMatrix& w, const float* a, Int8Row& row) {
  const int64_t stride = w.blocks_per_column * w.BytesPerBlock();
  row.phases.assign(static_cast<size_t>(2 * stride), 0);
  row.scales.resize(static_cast<size_t>(w.blocks_per_column));
  row.zero_weights.resize(static_cast<size_t>(w.blocks_per_column));
  if (FourBitInt8RowAvx512Serves(w)) return FourBitQuantizeRowAvx512(w, a, row);
  for (int64_t b = 0; b < w.blocks_per_column; ++b) {
    const BlockScale block = ScaleOfBlock(w, a, b);
    // Pairs of values, the even one to phase 0 and the odd to phase 1, so
    // the loop reads and writes at fixed steps.
    int32_t sum = 0;
    const int64_t end = std::min((b + 1) * w.block, w.depth);
    for (int64_t k = b * w.block; k + 1 < end; k += 2) {
      const int8_t even = Int8Code(a[k], block.inverse), odd = Int8Code(a[k + 1], block.inverse);
      row.phases[k / 2] = even;
      row.phases[stride + k / 2] = odd;
      sum += even + odd;
    }
    if ((end - b * w.block) % 2 != 0) {
      const int8_t last = Int8Code(a[end - 1], block.inverse);
      row.phases[(end - 1) / 2] = last;
      sum += last;
    }
    row.scales[b] = block.scale;
    row.zero_weights[b] = block.scale * static_cast<float>(sum);
  }
}

void RoundThroughInt8(const NBitsMatrix& w, const float* a, float* out) {
  if (FourBitInt8RowAvx512Serves(w)) return FourBitRoundThroughInt8Avx512(w, a, out);
  for (int64_t b = 0; b < w.blocks_per_column; ++b) {
    const BlockScale block = ScaleOfBlock(w, a, b);
    for (int64_t k = b * w.block; k < std::min((b + 1) * w.block, w.depth); ++k) {
      out[k] = static_cast<float>(Int8Code(a[k], block.inverse)) * block.scale;
    }
  }
}

void Int8RowTimesColumnsPortable(const NBitsMatrix& w, const Int8Row& row, int64_t first,
                                 int64_t last, float* y) {
  const int64_t bytes = w.BytesPerBlock();
  const int64_t stride = w.blocks_per_column * bytes;
  for (int64_t n = first; n < last; ++n) {
    const uint8_t* column = w.codes + n * stride;
    const float* scales = w.scales + n * w.blocks_per_column;
    float lanes[4] = {};
    float zero_terms = 0.0f;
    for (int64_t b = 0; b < w.blocks_per_column; ++b) {
      const uint8_t* codes = column + b * bytes;
      const int8_t* phases = row.phases.data() + b * bytes;
      Dots dots = {};
      for (int64_t j = 0; j < bytes; ++j) {
        dots[(j % 16) / 4] += (codes[j] & 15) * phases[j] + (codes[j] >> 4) * phases[stride + j];
      }
      const float scale = scales[b] * row.scales[b];
      for (int l = 0; l < 4; ++l) lanes[l] += static_cast<float>(dots[l]) * scale;
    }
    for (int64_t b = 0; b < w.blocks_per_column; ++b) {
      zero_terms += scales[b] * BlockZeroPoint(w, n, b) * row.zero_weights[b];
    }
    y[n - first] = ColumnSum(lanes, zero_terms);
  }
}

void Int8RowTimesColumnsAvx2(const NBitsMatrix& w, const Int8Row& row, int64_t first, int64_t last,
                             float* y) {
  ColumnsAvx2(w, row, first, last, y);
}

void Int8RowTimesColumns(const NBitsMatrix& w, const Int8Row& row, int64_t first, int64_t last,
                         float* y) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (FourBitInt8RowAvx512Serves(w)) {
    FourBitInt8RowTimesColumnsAvx512(w, row, first, last, y);
  } else if (avx2) {
    ColumnsAvx2(w, row, first, last, y);
  } else {
    Int8RowTimesColumnsPortable(w, row, first, last, y);
  }
}

}  // namespace nxrt::cpu
