// QuantizeLinear and DequantizeLinear between float32 and the 8-bit
// integers, per tensor or per axis: the forms ONNX Runtime's quantizers
// write around every int8 MatMul and Conv, in loops that vectorise. The data
// is viewed as [outer, channels, inner] around the axis, with one scale and
// zero point per channel (one channel per tensor).
//   quantize:   y = saturate(round_half_even(x / scale) + zero)
//   dequantize: y = (x - zero) * scale
// each step in float32, as ONNX Runtime computes them.
#pragma once

#include <cstdint>

namespace nxrt::cpu {

struct ChannelView {
  int64_t outer = 1;
  int64_t channels = 1;
  int64_t inner = 1;
};

// `zero` may be null (zero points of 0). T is uint8_t or int8_t.
template <typename T>
void QuantizeBytes(const float* x, const ChannelView& view, const float* scale, const T* zero,
                   T* y);
template <typename T>
void DequantizeBytes(const T* x, const ChannelView& view, const float* scale, const T* zero,
                     float* y);

// The least and greatest of `count` floats, each widened to include 0
// (DynamicQuantizeLinear's range). NaN is skipped.
void RangeWithZero(const float* x, int64_t count, float& lowest, float& highest);

}  // namespace nxrt::cpu
