// The last step of every quantisation: a float rounded half to even, shifted
// by an integer zero point and saturated into the target integer type, as
// the ONNX specification and ONNX Runtime's kernels do it (clamped before
// rounding, so the result is the same). Written without library calls or
// branches so that the loops around it vectorise; libm's nearbyintf is a
// scalar call.
#pragma once

#include <cstdint>
#include <limits>

namespace nxrt::cpu {

// round_half_even(v) + zero, saturated into T; `zero` is an integer within
// T's range. NaN gives T's lowest value.
template <typename T>
inline T SaturatingRound(float v, float zero) {
  static_assert(sizeof(T) <= 2, "the rounding trick holds below 2^22");
  constexpr float kLowest = static_cast<float>(std::numeric_limits<T>::min());
  constexpr float kHighest = static_cast<float>(std::numeric_limits<T>::max());
  // Adding and removing 1.5 * 2^23 rounds to the nearest integer, ties to
  // even, for |v| below 2^22, which the clamp ensures.
  constexpr float kRound = 12582912.0f;
  const float low = kLowest - zero, high = kHighest - zero;
  float clamped = v > low ? v : low;
  clamped = clamped < high ? clamped : high;
  return static_cast<T>(static_cast<int32_t>(((clamped + kRound) - kRound) + zero));
}

// y[j] = SaturatingRound(sums[j] * multipliers[j], zero) for j < n.
template <typename T>
void RequantizeColumns(const int32_t* __restrict sums, const float* __restrict multipliers,
                       float zero, int64_t n, T* __restrict y) {
  for (int64_t j = 0; j < n; ++j) {
    y[j] = SaturatingRound<T>(static_cast<float>(sums[j]) * multipliers[j], zero);
  }
}

// y[j] = SaturatingRound((sums[j] + bias) * multiplier, zero) for j < n.
template <typename T>
void RequantizeRun(const int32_t* __restrict sums, int32_t bias, float multiplier, float zero,
                   int64_t n, T* __restrict y) {
  for (int64_t j = 0; j < n; ++j) {
    y[j] = SaturatingRound<T>(static_cast<float>(sums[j] + bias) * multiplier, zero);
  }
}

}  // namespace nxrt::cpu
