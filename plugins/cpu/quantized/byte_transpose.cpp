#include "quantized/byte_transpose.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace nxrt::cpu {
namespace {

void TransposeScalar(const uint8_t* from, int64_t cols, int64_t row_begin, int64_t row_end,
                     int64_t col_begin, int64_t col_end, int64_t rows, uint8_t* to) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    for (int64_t c = col_begin; c < col_end; ++c) to[c * rows + r] = from[r * cols + c];
  }
}

#if defined(__SSE2__)
// One 16x16 tile: four rounds of unpacks, each interleaving pairs of
// registers at twice the width of the round before, leave register k
// holding column k. Unrolled whole, the arrays live in registers (rolled
// loops index them in memory, at half the speed).
void TransposeTile(const uint8_t* from, int64_t from_stride, uint8_t* to, int64_t to_stride) {
  __m128i x[16], y[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) {
    x[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i * from_stride));
  }
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    y[i] = _mm_unpacklo_epi8(x[2 * i], x[2 * i + 1]);
    y[i + 8] = _mm_unpackhi_epi8(x[2 * i], x[2 * i + 1]);
  }
#pragma GCC unroll 2
  for (int h = 0; h < 16; h += 8) {
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      x[i + h] = _mm_unpacklo_epi16(y[2 * i + h], y[2 * i + 1 + h]);
      x[i + 4 + h] = _mm_unpackhi_epi16(y[2 * i + h], y[2 * i + 1 + h]);
    }
  }
#pragma GCC unroll 4
  for (int g = 0; g < 16; g += 4) {
#pragma GCC unroll 2
    for (int i = 0; i < 2; ++i) {
      y[i + g] = _mm_unpacklo_epi32(x[2 * i + g], x[2 * i + 1 + g]);
      y[i + 2 + g] = _mm_unpackhi_epi32(x[2 * i + g], x[2 * i + 1 + g]);
    }
  }
#pragma GCC unroll 8
  for (int g = 0; g < 16; g += 2) {
    x[g] = _mm_unpacklo_epi64(y[g], y[g + 1]);
    x[g + 1] = _mm_unpackhi_epi64(y[g], y[g + 1]);
  }
#pragma GCC unroll 16
  for (int k = 0; k < 16; ++k) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + k * to_stride), x[k]);
  }
}
#endif

}  // namespace

void TransposeBytes(const uint8_t* from, int64_t rows, int64_t cols, uint8_t* to) {
  int64_t tiled_rows = 0, tiled_cols = 0;
#if defined(__SSE2__)
  tiled_rows = rows / 16 * 16;
  tiled_cols = cols / 16 * 16;
  for (int64_t r = 0; r < tiled_rows; r += 16) {
    for (int64_t c = 0; c < tiled_cols; c += 16) {
      TransposeTile(from + r * cols + c, cols, to + c * rows + r, rows);
    }
  }
#endif
  TransposeScalar(from, cols, 0, tiled_rows, tiled_cols, cols, rows, to);
  TransposeScalar(from, cols, tiled_rows, rows, 0, cols, rows, to);
}

}  // namespace nxrt::cpu
