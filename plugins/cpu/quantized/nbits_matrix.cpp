#include "quantized/nbits_matrix.hpp"

#include <algorithm>
#include <cstring>

#include "isa_clones.hpp"
#include "packed_int.hpp"
#include "quantized/four_bit_avx512.hpp"

namespace nxrt::cpu {
namespace {

// Eight floats and eight codes as GCC vectors: AVX registers in the AVX2
// clone, pairs of SSE registers in the baseline one, the same arithmetic
// in both. Loads need no alignment.
using Floats8 = float __attribute__((vector_size(32), aligned(4)));
using Ints8 = int32_t __attribute__((vector_size(32)));
// Byte i of each 32-bit word a lane holds: broadcasting words and shifting
// each lane by its own count is how GCC widens bytes in registers; given a
// vector of bytes it loads them one by one.
constexpr Ints8 kByteShifts = {0, 8, 16, 24, 0, 8, 16, 24};

// The products of a block's `bytes` bytes of codes with the values of
// kRows rows, each split into phases `stride` apart (NBitsRow) and starting
// at phases[r], in eight lanes per row added to totals[r] times `scale`.
// Each byte's codes are widened once for all the rows. Codes are widened to
// 32 bits before they are shifted apart: SSE and AVX have no byte shifts.
// Bytes j..j+7 of `codes`, each in its lane's low byte and the bytes above
// it: shifted right by kByteShifts + p * bits and masked, a lane holds the
// code at place p of its byte.
inline void LoadBytes(const uint8_t* codes, Ints8& bytes) {
  uint32_t word[2];
  std::memcpy(word, codes, sizeof(word));
  const int32_t low = static_cast<int32_t>(word[0]), high = static_cast<int32_t>(word[1]);
  bytes = Ints8{low, low, low, low, high, high, high, high};
}

template <int kBits, int kRows>
void AddBlock(const uint8_t* codes, const float* const* phases, int64_t stride, int64_t bytes,
              float scale, Floats8* totals) {
  constexpr int kPhases = 8 / kBits;
  constexpr int32_t kMask = (1 << kBits) - 1;
  // One chain of sums per row and phase, so the adds of one step do not
  // wait on each other.
  Floats8 lanes[kRows][kPhases];
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int p = 0; p < kPhases; ++p) lanes[r][p] = Floats8{};
  }
  int64_t j = 0;
  for (; j + 8 <= bytes; j += 8) {
    Ints8 bytes4;
    LoadBytes(codes + j, bytes4);
#pragma GCC unroll 4
    for (int p = 0; p < kPhases; ++p) {
      const Floats8 code =
          __builtin_convertvector((bytes4 >> (kByteShifts + p * kBits)) & kMask, Floats8);
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        lanes[r][p] += code * *reinterpret_cast<const Floats8*>(phases[r] + p * stride + j);
      }
    }
  }
  // Blocks of 16 2-bit codes leave four bytes; their sums join lane 0.
  float tail[kRows] = {};
  for (; j < bytes; ++j) {
    for (int p = 0; p < kPhases; ++p) {
      const float code = static_cast<float>((codes[j] >> (p * kBits)) & kMask);
      for (int r = 0; r < kRows; ++r) tail[r] += code * phases[r][p * stride + j];
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    Floats8 sum = lanes[r][0] + Floats8{tail[r]};
#pragma GCC unroll 4
    for (int p = 1; p < kPhases; ++p) sum += lanes[r][p];
    totals[r] += scale * sum;
  }
}

// Column n's sum for a row is the sum over blocks b of scale_b * (dot_b -
// zero_b * block_sum_b); the dots stay in lanes until the column is done.
// Even and odd blocks add into sums of their own: a block of 32 codes is
// two steps of AddBlock, too short to hide the latency of one chain.
template <int kBits, int kRows>
void ColumnsTimesRows(const NBitsMatrix& w, const NBitsRow* rows, int64_t first, int64_t last,
                      float* y, int64_t y_stride) {
  const int64_t bytes = w.BytesPerBlock();
  const int64_t stride = w.blocks_per_column * bytes;
  const float* row_phases[kRows];
  const float* row_sums[kRows];
  for (int r = 0; r < kRows; ++r) {
    row_phases[r] = rows[r].phases.data();
    row_sums[r] = rows[r].block_sums.data();
  }
  for (int64_t n = first; n < last; ++n) {
    const uint8_t* column = w.codes + n * stride;
    const float* scales = w.scales + n * w.blocks_per_column;
    Floats8 even[kRows], odd[kRows];
    float even_zero[kRows], odd_zero[kRows];
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      even[r] = odd[r] = Floats8{};
      even_zero[r] = odd_zero[r] = 0.0f;
    }
    const auto add_block = [&](int64_t b, Floats8* lanes, float* zero_terms) {
      const float* phases[kRows];
      for (int r = 0; r < kRows; ++r) phases[r] = row_phases[r] + b * bytes;
      AddBlock<kBits, kRows>(column + b * bytes, phases, stride, bytes, scales[b], lanes);
      const float zero = scales[b] * BlockZeroPoint(w, n, b);
      for (int r = 0; r < kRows; ++r) zero_terms[r] += zero * row_sums[r][b];
    };
    int64_t b = 0;
    for (; b + 2 <= w.blocks_per_column; b += 2) {
      add_block(b, even, even_zero);
      add_block(b + 1, odd, odd_zero);
    }
    if (b < w.blocks_per_column) add_block(b, even, even_zero);
    for (int r = 0; r < kRows; ++r) {
      const Floats8 l = even[r] + odd[r];
      y[r * y_stride + n - first] =
          (((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]))) -
          (even_zero[r] + odd_zero[r]);
    }
  }
}

// One group of kRows rows, a function of its own for each group size: the
// clones' flattening would otherwise inline every size into one function,
// which GCC then allocates registers for worse (a single row ran at two
// thirds of its speed).
template <int kRows>
NXRT_ISA_CLONES void GroupTimesColumns(const NBitsMatrix& w, const NBitsRow* rows, int64_t first,
                                       int64_t last, float* y, int64_t y_stride) {
  switch (w.bits) {
    case 2:
      return ColumnsTimesRows<2, kRows>(w, rows, first, last, y, y_stride);
    case 4:
      return ColumnsTimesRows<4, kRows>(w, rows, first, last, y, y_stride);
    default:
      return ColumnsTimesRows<8, kRows>(w, rows, first, last, y, y_stride);
  }
}

template <int kBits>
void DequantizeInPhaseOrder(const NBitsMatrix& w, int64_t first, int64_t last, float* out) {
  constexpr int kPhases = 8 / kBits;
  constexpr int32_t kMask = (1 << kBits) - 1;
  const int64_t bytes = w.BytesPerBlock();
  const int64_t stride = w.blocks_per_column * bytes;
  for (int64_t n = first; n < last; ++n) {
    const uint8_t* column = w.codes + n * stride;
    const float* scales = w.scales + n * w.blocks_per_column;
    float* dst = out + (n - first) * stride * kPhases;
    if (w.block_of_k != nullptr) {
      std::fill_n(dst, stride * kPhases, 0.0f);
      for (int64_t k = 0; k < w.depth; ++k) {
        const int64_t b = w.block_of_k[k];
        dst[(k % kPhases) * stride + k / kPhases] =
            (static_cast<float>(PackedCode(column, kBits, k)) - BlockZeroPoint(w, n, b)) *
            scales[b];
      }
      continue;
    }
    for (int64_t b = 0; b < w.blocks_per_column; ++b) {
      const Floats8 zero = Floats8{} + BlockZeroPoint(w, n, b);
      const Floats8 scale = Floats8{} + scales[b];
      const uint8_t* codes = column + b * bytes;
      float* block = dst + b * bytes;
      int64_t j = 0;
      for (; j + 8 <= bytes; j += 8) {
        Ints8 bytes4;
        LoadBytes(codes + j, bytes4);
#pragma GCC unroll 4
        for (int p = 0; p < kPhases; ++p) {
          const Ints8 code = (bytes4 >> (kByteShifts + p * kBits)) & kMask;
          *reinterpret_cast<Floats8*>(block + p * stride + j) =
              (__builtin_convertvector(code, Floats8) - zero) * scale;
        }
      }
      for (; j < bytes; ++j) {
        for (int p = 0; p < kPhases; ++p) {
          block[p * stride + j] =
              (static_cast<float>((codes[j] >> (p * kBits)) & kMask) - zero[0]) * scale[0];
        }
      }
    }
  }
}

NXRT_ISA_CLONES void DequantizeColumnsVectorised(const NBitsMatrix& w, int64_t first, int64_t last,
                                                 float* out) {
  switch (w.bits) {
    case 2:
      return DequantizeInPhaseOrder<2>(w, first, last, out);
    case 4:
      return DequantizeInPhaseOrder<4>(w, first, last, out);
    default:
      return DequantizeInPhaseOrder<8>(w, first, last, out);
  }
}

}  // namespace

void ToPhaseOrder(const NBitsMatrix& w, const float* a, float* out) {
  const int64_t per_byte = 8 / w.bits;
  const int64_t stride = w.blocks_per_column * w.BytesPerBlock();
  // Place by place, so each loop reads `a` at a fixed step.
  for (int64_t p = 0; p < per_byte; ++p) {
    float* phase = out + p * stride;
    const int64_t filled = (w.depth - p + per_byte - 1) / per_byte;
    for (int64_t j = 0; j < filled; ++j) phase[j] = a[j * per_byte + p];
    std::fill(phase + filled, phase + stride, 0.0f);
  }
}

void PrepareRow(const NBitsMatrix& w, const float* a, NBitsRow& row) {
  row.phases.resize(static_cast<size_t>(PhaseOrderLength(w)));
  ToPhaseOrder(w, a, row.phases.data());
  row.block_sums.resize(static_cast<size_t>(w.blocks_per_column));
  for (int64_t b = 0; b < w.blocks_per_column; ++b) {
    float sum = 0.0f;
    for (int64_t k = b * w.block; k < std::min((b + 1) * w.block, w.depth); ++k) sum += a[k];
    row.block_sums[static_cast<size_t>(b)] = sum;
  }
}

void RowsTimesColumns(const NBitsMatrix& w, const NBitsRow* rows, int count, int64_t first,
                      int64_t last, float* y, int64_t y_stride) {
  if (FourBitAvx512Serves(w)) {
    return FourBitRowsTimesColumnsAvx512(w, rows, count, first, last, y, y_stride);
  }
  int r = 0;
  for (; r + 4 <= count; r += 4) {
    GroupTimesColumns<4>(w, rows + r, first, last, y + r * y_stride, y_stride);
  }
  switch (count - r) {
    case 3:
      return GroupTimesColumns<3>(w, rows + r, first, last, y + r * y_stride, y_stride);
    case 2:
      return GroupTimesColumns<2>(w, rows + r, first, last, y + r * y_stride, y_stride);
    case 1:
      return GroupTimesColumns<1>(w, rows + r, first, last, y + r * y_stride, y_stride);
    default:
      return;
  }
}

void DequantizeColumns(const NBitsMatrix& w, int64_t first, int64_t last, float* out) {
  if (FourBitAvx512Serves(w)) return FourBitDequantizeColumnsAvx512(w, first, last, out);
  DequantizeColumnsVectorised(w, first, last, out);
}

}  // namespace nxrt::cpu
