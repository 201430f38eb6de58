// QuantizeLinear's and DequantizeLinear's rows
// (quantized/byte_quantization.hpp) against the rule one element at a time
// (quantized/saturating_round.hpp): ties to even, values past either end,
// NaN, every byte, per-axis scales and zero points, and every length around
// the vector width.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "quantized/byte_quantization.hpp"
#include "quantized/saturating_round.hpp"

namespace nxrt_test {
namespace {

// Three channels in runs of 0 to 70 elements, and channels along the last
// axis (runs of one), 3 and 37 of them.
std::vector<nxrt::cpu::ChannelView> Views() {
  std::vector<nxrt::cpu::ChannelView> views = {{5, 37, 1}};
  for (int64_t inner = 0; inner <= 70; ++inner) views.push_back({2, 3, inner});
  return views;
}

// Per-channel values that repeat every three channels.
template <typename V>
std::vector<V> ThreeWays(int64_t channels, V a, V b, V c) {
  std::vector<V> v(channels);
  for (int64_t i = 0; i < channels; ++i) v[i] = i % 3 == 0 ? a : i % 3 == 1 ? b : c;
  return v;
}

template <typename T>
void ExpectEveryByteFollowsTheRule() {
  for (const nxrt::cpu::ChannelView& view : Views()) {
    const int64_t inner = view.inner;
    const std::vector<float> scales = ThreeWays(view.channels, 0.5f, 0.037f, 3.0f);
    const std::vector<T> zeros = ThreeWays(view.channels, T(0), T(100), T(-7));
    std::vector<float> x(view.outer * view.channels * inner);
    for (size_t i = 0; i < x.size(); ++i) {
      // Halves (ties), large values of both signs, NaN, and others.
      const float step = static_cast<float>(static_cast<int64_t>(i % 41) - 20);
      x[i] = i % 13 == 0  ? std::numeric_limits<float>::quiet_NaN()
             : i % 7 == 0 ? step * 1e4f
             : i % 3 == 0 ? step * 0.25f
                          : step * 0.173f;
    }
    std::vector<T> y(x.size() + 1, T(42));
    nxrt::cpu::QuantizeBytes(x.data(), view, scales.data(), zeros.data(), y.data());
    for (int64_t o = 0; o < view.outer; ++o) {
      for (int64_t c = 0; c < view.channels; ++c) {
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t at = (o * view.channels + c) * inner + i;
          const T want = nxrt::cpu::SaturatingRound<T>(x[at] / scales[c], float(zeros[c]));
          ASSERT_EQ(y[at], want) << "x " << x[at] << " in a run of " << inner << ", channel " << c;
        }
      }
    }
    ASSERT_EQ(y.back(), T(42)) << "a write past the end, runs of " << inner;
  }
}

TEST(ByteQuantization, QuantizedBytesFollowTheRule) {
  ExpectEveryByteFollowsTheRule<uint8_t>();
  ExpectEveryByteFollowsTheRule<int8_t>();
}

template <typename T>
void ExpectEveryFloatFollowsTheRule() {
  for (const nxrt::cpu::ChannelView& view : Views()) {
    const int64_t inner = view.inner;
    const std::vector<float> scales = ThreeWays(view.channels, 0.5f, 0.037f, 3.0f);
    const std::vector<T> zeros = ThreeWays(view.channels, T(0), T(100), T(-7));
    std::vector<T> x(view.outer * view.channels * inner);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(i * 37 + 11);
    std::vector<float> y(x.size() + 1, -1.5f);
    nxrt::cpu::DequantizeBytes(x.data(), view, scales.data(), zeros.data(), y.data());
    for (int64_t o = 0; o < view.outer; ++o) {
      for (int64_t c = 0; c < view.channels; ++c) {
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t at = (o * view.channels + c) * inner + i;
          const float want = static_cast<float>(int32_t{x[at]} - int32_t{zeros[c]}) * scales[c];
          ASSERT_EQ(y[at], want) << "byte " << int{x[at]} << " in a run of " << inner;
        }
      }
    }
    ASSERT_EQ(y.back(), -1.5f) << "a write past the end, runs of " << inner;
  }
}

TEST(ByteQuantization, DequantizedFloatsFollowTheRule) {
  ExpectEveryFloatFollowsTheRule<uint8_t>();
  ExpectEveryFloatFollowsTheRule<int8_t>();
}

}  // namespace
}  // namespace nxrt_test
