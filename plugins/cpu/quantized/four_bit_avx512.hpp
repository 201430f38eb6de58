// MatMulNBits' 4-bit forms on AVX-512 (F, BW, VL, DQ; VNNI for int8 rows), the CPUs where
// a decode step's products are bound by how fast codes widen rather than by
// memory. Sixteen bytes of codes widen to 32 floats in four instructions and
// meet the row with fused multiply-adds, several columns at a time, so the
// chains of sums do not wait on each other. The baseline and AVX2 forms
// (nbits_matrix.cpp) give other roundings of the same sums, as OpenBLAS and
// oneDNN do from one CPU to the next. The float forms live in
// four_bit_avx512.cpp, the int8 one in four_bit_int8_avx512.cpp.
#pragma once

#include <cstdint>

#include "quantized/int8_row.hpp"
#include "quantized/nbits_matrix.hpp"

namespace nxrt::cpu {

// Whether the forms below serve `w` on this CPU: 4-bit codes in blocks
// along k, and the CPU has AVX-512 F, BW, VL and DQ.
bool FourBitAvx512Serves(const NBitsMatrix& w);

// RowsTimesColumns (nbits_matrix.hpp): eight rows a pass over the codes,
// dequantized in registers, then the rest four at a time. Needs
// FourBitAvx512Serves(w). Allocates nothing.
void FourBitRowsTimesColumnsAvx512(const NBitsMatrix& w, const NBitsRow* rows, int count,
                                   int64_t first, int64_t last, float* y, int64_t y_stride);

// DequantizeColumns (nbits_matrix.hpp). Needs FourBitAvx512Serves(w).
// Allocates nothing.
void FourBitDequantizeColumnsAvx512(const NBitsMatrix& w, int64_t first, int64_t last, float* out);

// Whether FourBitInt8RowTimesColumnsAvx512 serves `w` on this CPU:
// TakesInt8Rows(w) (int8_row.hpp), and the CPU has AVX-512 VNNI besides.
bool FourBitInt8RowAvx512Serves(const NBitsMatrix& w);

// Int8RowTimesColumns (int8_row.hpp) with VNNI's byte multiply-adds, 128
// codes an instruction pair. The integer dot products are exact; their
// scaled sums add in another order than the other forms', so the last bits
// may differ. Needs FourBitInt8RowAvx512Serves(w). Allocates nothing.
void FourBitInt8RowTimesColumnsAvx512(const NBitsMatrix& w, const Int8Row& row, int64_t first,
                                      int64_t last, float* y);

// QuantizeRow's blocks (int8_row.hpp), the same codes, scales and zero
// weights, sixteen values a step; `row`'s buffers are already sized, and
// its phases zero. Needs FourBitInt8RowAvx512Serves(w). Allocates nothing.
void FourBitQuantizeRowAvx512(const NBitsMatrix& w, const float* a, Int8Row& row);

// RoundThroughInt8 (int8_row.hpp), the same values. Needs
// FourBitInt8RowAvx512Serves(w). Allocates nothing.
void FourBitRoundThroughInt8Avx512(const NBitsMatrix& w, const float* a, float* out);

}  // namespace nxrt::cpu
