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

// The zero point of block `block` of column `column`.
inline float BlockZeroPoint(const NBitsMatrix& w, int64_t column, int64_t block) {
  if (w.float_zero_points != nullptr) {
    return w.float_zero_points[column * w.blocks_per_column + block];
  }
  if (w.packed_zero_points != nullptr) {
    // Shifts, not PackedCode's divisions by a run-time count: this runs
    // once per block of every column.
    const int log_per_byte = w.bits == 2 ? 2 : w.bits == 4 ? 1 : 0;
    const int64_t row_bytes = (w.blocks_per_column * w.bits + 7) / 8;
    const uint8_t byte = w.packed_zero_points[column * row_bytes + (block >> log_per_byte)];
    const int shift = static_cast<int>(block & ((1 << log_per_byte) - 1)) * w.bits;
    return static_cast<float>((byte >> shift) & ((1 << w.bits) - 1));
  }
  return static_cast<float>(1 << (w.bits - 1));
}

// Whether RowsTimesColumns serves the matrix: blocks follow k (no g_idx).
inline bool StreamsInBlocks(const NBitsMatrix& w) {
  return w.block_of_k == nullptr;
}

// Phase order: a byte of codes holds 8 / bits consecutive elements, so a
// row of K values is split by an element's place in its byte: element
// j * (8 / bits) + p goes to p * bytes + j, with `bytes` the codes' bytes
// per column, and zeros fill the places past K. Codes widened a byte at a
// time then meet their row values at equal offsets, a loop the vectoriser
// keeps in registers. A dot product is the same in either order.
//
// The length of a row in phase order: K rounded up to whole blocks.
inline int64_t PhaseOrderLength(const NBitsMatrix& w) {
  return w.blocks_per_column * w.block;
}

// out[PhaseOrderLength(w)] = a [K] in phase order.
void ToPhaseOrder(const NBitsMatrix& w, const float* a, float* out);

// A row of A laid out for RowsTimesColumns: in phase order, and
// block_sums[b] the sum of block b's values, which the zero points
// multiply.
struct NBitsRow {
  std::vector<float> phases;
  std::vector<float> block_sums;
};

// Lays `a` [K] out in `row`; grows its buffers only past their size.
void PrepareRow(const NBitsMatrix& w, const float* a, NBitsRow& row);

// y[i * y_stride + j] = sum over k of a_i[k] * W(first + j, k) for the
// `count` rows a_i prepared in rows[i] and the columns [first, last): one
// pass over those columns' codes for every four rows, each block's codes
// widened once for the four. Needs StreamsInBlocks(w). Allocates nothing.
void RowsTimesColumns(const NBitsMatrix& w, const NBitsRow* rows, int count, int64_t first,
                      int64_t last, float* y, int64_t y_stride);

// Columns [first, last) of W as floats in phase order: out[j * L + i] is
// W(first + j, k) with i the place of k in phase order and L =
// PhaseOrderLength(w), zero past K. Multiplied by rows in phase order, a
// panel for a product of several rows. Allocates nothing.
void DequantizeColumns(const NBitsMatrix& w, int64_t first, int64_t last, float* out);

}  // namespace nxrt::cpu
