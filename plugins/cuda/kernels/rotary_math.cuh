// One element of a rotary position embedding on the device, shared by
// RotaryEmbedding and GroupQueryAttention so both rotate the same way.
#pragma once

#include <cstdint>

#include "kernels/device_math.cuh"

namespace nxrt::cuda {

// Element d < rotary_dim of head vector `x` turned by one position's angles
// (`cos_row` and `sin_row`, rotary_dim / 2 entries each): element i pairs
// with i + rotary_dim / 2 (half split), or 2i with 2i + 1 (interleaved).
template <typename T, typename C>
__device__ __forceinline__ float RotaryElement(const T* x, const C* cos_row, const C* sin_row,
                                               int64_t d, int64_t rotary_dim, bool interleaved) {
  const int64_t half = rotary_dim / 2;
  int64_t i = 0;
  float partner = 0.0f;
  if (interleaved) {
    i = d / 2;
    partner = d % 2 == 0 ? -ToFloat(x[d + 1]) : ToFloat(x[d - 1]);
  } else {
    i = d < half ? d : d - half;
    partner = d < half ? -ToFloat(x[d + half]) : ToFloat(x[d - half]);
  }
  return ToFloat(x[d]) * ToFloat(cos_row[i]) + partner * ToFloat(sin_row[i]);
}

}  // namespace nxrt::cuda
