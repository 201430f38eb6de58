// Rotary position embedding of one head vector: the first `rotary_dim`
// elements are rotated in pairs by the angles of one position (one row of the
// cos and sin caches, rotary_dim / 2 entries each), pairing element i with
// i + rotary_dim / 2 (half split) or 2i with 2i + 1 (interleaved); the rest
// pass through. Shared by GroupQueryAttention and both RotaryEmbedding ops,
// computing in float for every element type.
#pragma once

#include <cstdint>

namespace nxrt::cpu {

template <typename T, typename U, typename C>
void RotateHead(const T* x, U* y, const C* cos, const C* sin, int64_t head_size, int64_t rotary_dim,
                bool interleaved) {
  const int64_t half = rotary_dim / 2;
  for (int64_t i = 0; i < half; ++i) {
    const int64_t a = interleaved ? 2 * i : i;
    const int64_t b = interleaved ? 2 * i + 1 : i + half;
    const float x1 = static_cast<float>(x[a]);
    const float x2 = static_cast<float>(x[b]);
    const float c = static_cast<float>(cos[i]);
    const float s = static_cast<float>(sin[i]);
    y[a] = static_cast<U>(x1 * c - x2 * s);
    y[b] = static_cast<U>(x2 * c + x1 * s);
  }
  if (static_cast<const void*>(x) != static_cast<const void*>(y)) {
    for (int64_t i = rotary_dim; i < head_size; ++i) y[i] = static_cast<U>(x[i]);
  }
}

}  // namespace nxrt::cpu
