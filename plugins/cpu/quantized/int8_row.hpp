// A row of A quantized to int8 block by block, for MatMulNBits at
// accuracy_level 4, which lets activations be int8: each block of `block`
// values gets scale max|a| / 127 and codes round(a / scale), as ONNX
// Runtime's int8 path does. A block's product with 4-bit weight codes is
// then an exact integer dot product; x86's byte multiply-add (pmaddubsw)
// takes 32 codes per instruction, where widening codes to float costs
// several instructions per eight.
#pragma once

#include <cstdint>
#include <vector>

#include "quantized/nbits_matrix.hpp"

namespace nxrt::cpu {

// The row in phase order (nbits_matrix.hpp) as int8 codes, zero past K;
// per block its scale, and its scale times the sum of its codes, which the
// weights' zero points multiply.
struct Int8Row {
  std::vector<int8_t> phases;
  std::vector<float> scales;
  std::vector<float> zero_weights;
};

// Whether Int8RowTimesColumns serves `w`: 4-bit codes in blocks along k,
// with code zero points or none.
inline bool TakesInt8Rows(const NBitsMatrix& w) {
  return w.bits == 4 && StreamsInBlocks(w) && w.float_zero_points == nullptr;
}

// Quantizes `a` [K] into `row`; grows its buffers only past their size.
void QuantizeRow(const NBitsMatrix& w, const float* a, Int8Row& row);

// out[K] = `a` quantized as QuantizeRow does and widened back, so a float
// product of many rows gives what the int8 one would, up to rounding.
void RoundThroughInt8(const NBitsMatrix& w, const float* a, float* out);

// y[j] = the product of the quantized row with column first + j of W for
// the columns [first, last), in the best form this CPU runs: AVX-512 VNNI's
// (four_bit_avx512.hpp), AVX2's or the portable one. Needs
// TakesInt8Rows(w). Allocates nothing.
void Int8RowTimesColumns(const NBitsMatrix& w, const Int8Row& row, int64_t first, int64_t last,
                         float* y);
// The AVX2 and the portable forms add the same exact integer dot products
// in the same float order, so they give the same bits. The AVX2 one needs a
// CPU with AVX2.
void Int8RowTimesColumnsAvx2(const NBitsMatrix& w, const Int8Row& row, int64_t first, int64_t last,
                             float* y);
void Int8RowTimesColumnsPortable(const NBitsMatrix& w, const Int8Row& row, int64_t first,
                                 int64_t last, float* y);

}  // namespace nxrt::cpu
