#include "quantized/nbits_matrix.hpp"

#include <algorithm>
#include <cstring>

#include "isa_clones.hpp"
#include "packed_int.hpp"

namespace nxrt::cpu {
namespace {

// Codes unpacked at a time: a stack buffer that stays in L1.
constexpr int64_t kChunk = 64;

float ZeroPoint(const NBitsMatrix& w, int64_t column, int64_t block) {
  if (w.float_zero_points != nullptr) {
    return w.float_zero_points[column * w.blocks_per_column + block];
  }
  if (w.packed_zero_points != nullptr) {
    const int64_t row_bytes = (w.blocks_per_column * w.bits + 7) / 8;
    return static_cast<float>(PackedCode(w.packed_zero_points + column * row_bytes, w.bits, block));
  }
  return static_cast<float>(1 << (w.bits - 1));
}

// `count` rounded up to whole bytes of codes.
int64_t WholeBytes(int bits, int64_t count) {
  const int64_t per_byte = 8 / bits;
  return (count + per_byte - 1) / per_byte * per_byte;
}

// dst[i] = code i of `src` - zero for i < count, count a whole number of
// bytes of codes.
void Unpack(int bits, const uint8_t* src, int64_t count, float zero, float* dst) {
  if (bits == 4) {
    for (int64_t j = 0; j < count / 2; ++j) {
      const uint8_t byte = src[j];
      dst[2 * j] = static_cast<float>(byte & 15) - zero;
      dst[2 * j + 1] = static_cast<float>(byte >> 4) - zero;
    }
  } else if (bits == 8) {
    for (int64_t j = 0; j < count; ++j) dst[j] = static_cast<float>(src[j]) - zero;
  } else {
    for (int64_t i = 0; i < count; ++i)
      dst[i] = static_cast<float>(PackedCode(src, bits, i)) - zero;
  }
}

// Eight floats and eight codes as GCC vectors: AVX registers in the AVX2
// clone, pairs of SSE registers in the baseline one, the same arithmetic
// in both. Loads need no alignment.
using Floats8 = float __attribute__((vector_size(32), aligned(4)));
using Ints8 = int32_t __attribute__((vector_size(32)));
// Byte i of each 32-bit word a lane holds: broadcasting words and shifting
// each lane by its own count is how GCC widens bytes in registers; given a
// vector of bytes it loads them one by one.
constexpr Ints8 kByteShifts = {0, 8, 16, 24, 0, 8, 16, 24};

// The products of a block's `bytes` bytes of codes with their row values,
// the row split into phases `stride` apart (NBitsRow), in eight lanes
// added to `total` times `scale`.
// Codes are widened to 32 bits before they are shifted apart: SSE and AVX
// have no byte shifts, and GCC would extract them one by one.
template <int kBits>
void AddBlock(const uint8_t* codes, const float* phases, int64_t stride, int64_t bytes, float scale,
              Floats8& total) {
  constexpr int kPhases = 8 / kBits;
  constexpr int32_t kMask = (1 << kBits) - 1;
  // One chain of sums per phase, so the adds of one step do not wait on
  // each other.
  Floats8 lanes[kPhases] = {};
  int64_t j = 0;
  for (; j + 8 <= bytes; j += 8) {
    uint32_t word[2];
    std::memcpy(word, codes + j, sizeof(word));
    const Ints8 bytes4 = {static_cast<int32_t>(word[0]), static_cast<int32_t>(word[0]),
                          static_cast<int32_t>(word[0]), static_cast<int32_t>(word[0]),
                          static_cast<int32_t>(word[1]), static_cast<int32_t>(word[1]),
                          static_cast<int32_t>(word[1]), static_cast<int32_t>(word[1])};
#pragma GCC unroll 4
    for (int p = 0; p < kPhases; ++p) {
      const Ints8 code = (bytes4 >> (kByteShifts + p * kBits)) & kMask;
      lanes[p] += __builtin_convertvector(code, Floats8) *
                  *reinterpret_cast<const Floats8*>(phases + p * stride + j);
    }
  }
  for (; j < bytes; ++j) {
    for (int p = 0; p < kPhases; ++p) {
      lanes[0][0] += static_cast<float>((codes[j] >> (p * kBits)) & kMask) * phases[p * stride + j];
    }
  }
  Floats8 sum = lanes[0];
#pragma GCC unroll 4
  for (int p = 1; p < kPhases; ++p) sum += lanes[p];
  total += scale * sum;
}

// Column n's sum is the sum over blocks b of scale_b * (dot_b - zero_b *
// block_sum_b); the dots stay in lanes until the column is done.
template <int kBits>
void ColumnsTimesRow(const NBitsMatrix& w, const NBitsRow& row, int64_t first, int64_t last,
                     float* y) {
  const int64_t bytes = w.BytesPerBlock();
  const int64_t stride = w.blocks_per_column * bytes;
  for (int64_t n = first; n < last; ++n) {
    const uint8_t* column = w.codes + n * stride;
    const float* scales = w.scales + n * w.blocks_per_column;
    Floats8 lanes = {};
    float zero_terms = 0.0f;
    for (int64_t b = 0; b < w.blocks_per_column; ++b) {
      AddBlock<kBits>(column + b * bytes, row.phases.data() + b * bytes, stride, bytes, scales[b],
                      lanes);
      zero_terms += scales[b] * ZeroPoint(w, n, b) * row.block_sums[b];
    }
    y[n - first] = (((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
                    ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))) -
                   zero_terms;
  }
}

}  // namespace

void PrepareRow(const NBitsMatrix& w, const float* a, NBitsRow& row) {
  const int per_byte = 8 / w.bits;
  const int64_t stride = w.blocks_per_column * w.BytesPerBlock();
  row.phases.assign(static_cast<size_t>(stride * per_byte), 0.0f);
  row.block_sums.assign(static_cast<size_t>(w.blocks_per_column), 0.0f);
  for (int64_t k = 0; k < w.depth; ++k) {
    row.phases[(k % per_byte) * stride + k / per_byte] = a[k];
    row.block_sums[k / w.block] += a[k];
  }
}

NXRT_ISA_CLONES void RowTimesColumns(const NBitsMatrix& w, const NBitsRow& row, int64_t first,
                                     int64_t last, float* y) {
  switch (w.bits) {
    case 2:
      return ColumnsTimesRow<2>(w, row, first, last, y);
    case 4:
      return ColumnsTimesRow<4>(w, row, first, last, y);
    default:
      return ColumnsTimesRow<8>(w, row, first, last, y);
  }
}

NXRT_ISA_CLONES void DequantizeColumns(const NBitsMatrix& w, int64_t first, int64_t last,
                                       float* out) {
  const int64_t bytes = w.BytesPerBlock();
  alignas(32) float codes[kChunk];
  for (int64_t n = first; n < last; ++n) {
    const uint8_t* column = w.codes + n * w.blocks_per_column * bytes;
    const float* scales = w.scales + n * w.blocks_per_column;
    float* dst = out + (n - first) * w.depth;
    if (w.block_of_k != nullptr) {
      for (int64_t k = 0; k < w.depth; ++k) {
        const int64_t b = w.block_of_k[k];
        dst[k] =
            (static_cast<float>(PackedCode(column, w.bits, k)) - ZeroPoint(w, n, b)) * scales[b];
      }
      continue;
    }
    for (int64_t b = 0; b < w.blocks_per_column; ++b) {
      const int64_t start = b * w.block;
      const int64_t length = std::min(w.block, w.depth - start);
      const float zero = ZeroPoint(w, n, b);
      for (int64_t c = 0; c < length; c += kChunk) {
        const int64_t count = std::min(kChunk, length - c);
        Unpack(w.bits, column + b * bytes + c * w.bits / 8, WholeBytes(w.bits, count), zero, codes);
        for (int64_t i = 0; i < count; ++i) dst[start + c + i] = codes[i] * scales[b];
      }
    }
  }
}

}  // namespace nxrt::cpu
