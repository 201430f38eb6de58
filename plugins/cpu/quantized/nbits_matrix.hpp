// A weight matrix quantized in blocks along K, as com.microsoft MatMulNBits
// keeps it: for each of N columns, ceil(K / block) blocks of `bits`-bit
// codes packed with element 0 in the lowest bits of its byte, one scale per
// block, and per block a zero point given as packed codes, as floats, or not
// at all (then the middle code, 2^(bits-1)). Element (n, k) is
// (code - zero point) * scale of its block: k / block, or g_idx[k] where the
// model gives one.
//
// The helpers read the codes where the model keeps them, so every shape of a
// node streams one copy of the weights; nothing is unpacked ahead of time.
#pragma once

#include <cstdint>
#include <vector>

namespace nxrt::cpu {

struct NBitsMatrix {
  int64_t columns = 0;  // N
  int64_t depth = 0;    // K
  int bits = 4;         // 2, 4 or 8
  int64_t block = 32;   // codes per block, a power of two of at least 16
  int64_t blocks_per_column = 0;
  // [N, blocks_per_column, block * bits / 8] codes; not owned.
  const uint8_t* codes = nullptr;
  // [N, blocks_per_column] scales as float; not owned.
  const float* scales = nullptr;
  // At most one of the two zero point forms; null when absent. Packed:
  // [N, ceil(blocks_per_column * bits / 8)] bytes of codes. Float:
  // [N, blocks_per_column]. Not owned.
  const uint8_t* packed_zero_points = nullptr;
  const float* float_zero_points = nullptr;
  // [K] block of each k (g_idx); null when block k / block. Not owned.
  const int32_t* block_of_k = nullptr;

  int64_t BytesPerBlock() const { return block * bits / 8; }
};

// Whether RowTimesColumns serves the matrix: blocks follow k (no g_idx).
inline bool StreamsInBlocks(const NBitsMatrix& w) {
  return w.block_of_k == nullptr;
}

// A row of A laid out for RowTimesColumns. A byte of codes holds 8 / bits
// consecutive elements, so the row is split by an element's place in its
// byte: phases[p * bytes + j] = a[j * (8 / bits) + p], zero past K, with
// `bytes` the codes' bytes per column. Each byte's codes then meet their
// row values at equal offsets, a loop the vectoriser keeps in registers.
// block_sums[b] is the sum of block b's values, which the zero points
// multiply.
struct NBitsRow {
  std::vector<float> phases;
  std::vector<float> block_sums;
};

// Lays `a` [K] out in `row`; grows its buffers only past their size.
void PrepareRow(const NBitsMatrix& w, const float* a, NBitsRow& row);

// y[j] = sum over k of a[k] * W(first + j, k), for the columns
// [first, last), with `row` prepared from a: one pass over those columns'
// codes. Needs StreamsInBlocks(w). Allocates nothing.
void RowTimesColumns(const NBitsMatrix& w, const NBitsRow& row, int64_t first, int64_t last,
                     float* y);

// out[j * K + k] = W(first + j, k) for the columns [first, last): a panel
// of float columns for a product of several rows. Allocates nothing.
void DequantizeColumns(const NBitsMatrix& w, int64_t first, int64_t last, float* out);

}  // namespace nxrt::cpu
