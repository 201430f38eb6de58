#include "quantized/byte_quantization.hpp"

#include <algorithm>

#include "isa_clones.hpp"
#include "quantized/saturating_round.hpp"

namespace nxrt::cpu {
namespace {

// One channel's run. Byte stores may alias anything, so the loop bound and
// pointers are locals the compiler need not reload.
template <typename T>
NXRT_ISA_CLONES void QuantizeRun(const float* __restrict x, float scale, float zero, int64_t n,
                                 T* __restrict y) {
  for (int64_t i = 0; i < n; ++i) y[i] = SaturatingRound<T>(x[i] / scale, zero);
}

template <typename T>
NXRT_ISA_CLONES void DequantizeRun(const T* __restrict x, float scale, int32_t zero, int64_t n,
                                   float* __restrict y) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = static_cast<float>(static_cast<int32_t>(x[i]) - zero) * scale;
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
  ForEachRun(view, [&](int64_t at, int64_t c) {
    const float z = zero ? static_cast<float>(zero[c]) : 0.0f;
    QuantizeRun(x + at, scale[c], z, view.inner, y + at);
  });
}

template <typename T>
void DequantizeBytes(const T* x, const ChannelView& view, const float* scale, const T* zero,
                     float* y) {
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
