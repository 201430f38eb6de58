#include "quantized/byte_quantization.hpp"

#include <algorithm>
#include <type_traits>

#include "isa_clones.hpp"
#include "quantized/saturating_round.hpp"
#include "x86_intrinsics.hpp"

namespace nxrt::cpu {
namespace {

// One channel's run. Byte stores may alias anything, so the loop bound and
// pointers are locals the compiler need not reload.
template <typename T>
NXRT_ISA_CLONES void PortableQuantizeRun(const float* __restrict x, float scale, float zero,
                                         int64_t n, T* __restrict y) {
  for (int64_t i = 0; i < n; ++i) y[i] = SaturatingRound<T>(x[i] / scale, zero);
}

#if defined(__x86_64__)
struct QuantizeLanes {
  __m512 divisor, shift, low, high;
};

// SaturatingRound's steps on sixteen lanes, the chosen ones stored as bytes.
template <typename T>
__attribute__((target("avx512f"))) inline void QuantizeSixteen(const QuantizeLanes& q,
                                                               const float* x, __mmask16 lanes,
                                                               T* y) {
  const __m512 round = _mm512_set1_ps(12582912.0f);
  const __m512 v = _mm512_div_ps(_mm512_maskz_loadu_ps(lanes, x), q.divisor);
  // max and min return their second operand for NaN, as SaturatingRound does.
  const __m512 clamped = _mm512_min_ps(_mm512_max_ps(v, q.low), q.high);
  const __m512 rounded = _mm512_sub_ps(_mm512_add_ps(clamped, round), round);
  // The value is in T's range, so the truncating narrowing is exact.
  _mm512_mask_cvtepi32_storeu_epi8(y, lanes, _mm512_cvttps_epi32(_mm512_add_ps(rounded, q.shift)));
}

// Sixteen lanes a step, each narrowed by the store (the compiler's form of
// the loop narrows the bytes one by one), the last step masked.
template <typename T>
__attribute__((target("avx512f"))) void Avx512QuantizeRun(const float* x, float scale, float zero,
                                                          int64_t n, T* y) {
  constexpr float kLowest = std::is_same_v<T, uint8_t> ? 0.0f : -128.0f;
  constexpr float kHighest = std::is_same_v<T, uint8_t> ? 255.0f : 127.0f;
  const QuantizeLanes q{_mm512_set1_ps(scale), _mm512_set1_ps(zero), _mm512_set1_ps(kLowest - zero),
                        _mm512_set1_ps(kHighest - zero)};
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 lanes = n - i >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << (n - i)) - 1);
    QuantizeSixteen(q, x + i, lanes, y + i);
  }
}
#endif

template <typename T>
void QuantizeRun(const float* x, float scale, float zero, int64_t n, T* y) {
#if defined(__x86_64__)
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx512) return Avx512QuantizeRun(x, scale, zero, n, y);
#endif
  PortableQuantizeRun(x, scale, zero, n, y);
}

template <typename T>
NXRT_ISA_CLONES void PortableDequantizeRun(const T* __restrict x, float scale, int32_t zero,
                                           int64_t n, float* __restrict y) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = static_cast<float>(static_cast<int32_t>(x[i]) - zero) * scale;
}

#if defined(__x86_64__)
// The portable loop's steps sixteen lanes at a time, the last step masked.
template <typename T>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void Avx512DequantizeRun(const T* x,
                                                                              float scale,
                                                                              int32_t zero,
                                                                              int64_t n, float* y) {
  const __m512 factor = _mm512_set1_ps(scale);
  const __m512i shift = _mm512_set1_epi32(zero);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 lanes = n - i >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m128i bytes = _mm_maskz_loadu_epi8(lanes, x + i);
    const __m512i wide =
        std::is_same_v<T, uint8_t> ? _mm512_cvtepu8_epi32(bytes) : _mm512_cvtepi8_epi32(bytes);
    _mm512_mask_storeu_ps(y + i, lanes,
                          _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(wide, shift)), factor));
  }
}
#endif

template <typename T>
void DequantizeRun(const T* x, float scale, int32_t zero, int64_t n, float* y) {
#if defined(__x86_64__)
  static const bool avx512 =
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  if (avx512) return Avx512DequantizeRun(x, scale, zero, n, y);
#endif
  PortableDequantizeRun(x, scale, zero, n, y);
}

// Channels along the last axis (runs of one element): each row's elements
// against the channels' scales and zero points, in loops that vectorise.
template <typename T>
NXRT_ISA_CLONES void QuantizeAcross(const float* __restrict x, const ChannelView& view,
                                    const float* __restrict scale, const T* __restrict zero,
                                    T* __restrict y) {
  for (int64_t o = 0; o < view.outer; ++o) {
    const float* row = x + o * view.channels;
    T* out = y + o * view.channels;
    for (int64_t c = 0; c < view.channels; ++c) {
      out[c] = SaturatingRound<T>(row[c] / scale[c], zero ? static_cast<float>(zero[c]) : 0.0f);
    }
  }
}

template <typename T>
NXRT_ISA_CLONES void DequantizeAcross(const T* __restrict x, const ChannelView& view,
                                      const float* __restrict scale, const T* __restrict zero,
                                      float* __restrict y) {
  for (int64_t o = 0; o < view.outer; ++o) {
    const T* row = x + o * view.channels;
    float* out = y + o * view.channels;
    for (int64_t c = 0; c < view.channels; ++c) {
      const int32_t z = zero ? static_cast<int32_t>(zero[c]) : 0;
      out[c] = static_cast<float>(static_cast<int32_t>(row[c]) - z) * scale[c];
    }
  }
}

// run(offset, channel) for each channel's run of view.inner elements.
template <typename Run>
void ForEachRun(const ChannelView& view, Run&& run) {
  for (int64_t o = 0; o < view.outer; ++o) {
    for (int64_t c = 0; c < view.channels; ++c) run((o * view.channels + c) * view.inner, c);
  }
}

}  // namespace

template <typename T>
void QuantizeBytes(const float* x, const ChannelView& view, const float* scale, const T* zero,
                   T* y) {
  if (view.inner == 1 && view.channels > 1) return QuantizeAcross(x, view, scale, zero, y);
  ForEachRun(view, [&](int64_t at, int64_t c) {
    const float z = zero ? static_cast<float>(zero[c]) : 0.0f;
    QuantizeRun(x + at, scale[c], z, view.inner, y + at);
  });
}

template <typename T>
void DequantizeBytes(const T* x, const ChannelView& view, const float* scale, const T* zero,
                     float* y) {
  if (view.inner == 1 && view.channels > 1) return DequantizeAcross(x, view, scale, zero, y);
  ForEachRun(view, [&](int64_t at, int64_t c) {
    DequantizeRun(x + at, scale[c], zero ? zero[c] : 0, view.inner, y + at);
  });
}

template void QuantizeBytes(const float*, const ChannelView&, const float*, const uint8_t*,
                            uint8_t*);
template void QuantizeBytes(const float*, const ChannelView&, const float*, const int8_t*, int8_t*);
template void DequantizeBytes(const uint8_t*, const ChannelView&, const float*, const uint8_t*,
                              float*);
template void DequantizeBytes(const int8_t*, const ChannelView&, const float*, const int8_t*,
                              float*);

void RangeWithZero(const float* x, int64_t count, float& lowest, float& highest) {
  // Eight independent lanes, so the loop vectorises without reassociating.
  constexpr int kLanes = 8;
  float low[kLanes] = {}, high[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= count; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const float v = x[i + j];
      low[j] = v < low[j] ? v : low[j];
      high[j] = v > high[j] ? v : high[j];
    }
  }
  for (; i < count; ++i) {
    low[0] = x[i] < low[0] ? x[i] : low[0];
    high[0] = x[i] > high[0] ? x[i] : high[0];
  }
  lowest = *std::min_element(low, low + kLanes);
  highest = *std::max_element(high, high + kLanes);
}

}  // namespace nxrt::cpu
