// The rows of com.microsoft QLinearAdd and QLinearMul: 8-bit operands in,
// the scales folded into multipliers of the result's scale as ONNX
// Runtime's kernels fold them,
//   add: c = a * a_ratio + b * b_ratio + offset
//   mul: c = (a - a_zero) * (b - b_zero) * ratio
// then rounded half to even, shifted by c_zero and saturated. With AVX2, 32
// elements at a time in intrinsics (GCC's vectorised form of the loop packs
// the bytes back one at a time and runs at half the speed), with AVX-512
// sixteen lanes a step, the last one masked; the forms give the same bits,
// none contracting into FMA. A long row whose other
// operand is one value (a scalar, or a channel's constant) is a function of
// one byte: its 256 results are computed so, then looked up
// (quantized/byte_lookup.hpp), the same bits at a quarter of the time.
#pragma once

#include <cstdint>

namespace nxrt::cpu {

struct QLinearScales {
  float a_zero, b_zero, c_zero;
  float a_ratio, b_ratio, offset;  // add's
  float ratio;                     // mul's
};

enum class QLinearOp { kAdd, kMul };

// c[i] for i < n from a[i * a_step] and b[i * b_step], each step 1, or 0
// for an operand broadcast along the row. T is uint8_t or int8_t.
template <typename T>
void QLinearRow(QLinearOp op, const QLinearScales& s, const T* a, int64_t a_step, const T* b,
                int64_t b_step, int64_t n, T* c);

// QLinearRow's arithmetic in the AVX2 form, on a CPU that has AVX2, for the
// tests that hold it to the same bits as the AVX-512 form QLinearRow runs.
template <typename T>
void QLinearRowAvx2(QLinearOp op, const QLinearScales& s, const T* a, int64_t a_step, const T* b,
                    int64_t b_step, int64_t n, T* c);

}  // namespace nxrt::cpu
