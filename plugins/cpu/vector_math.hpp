// Exponential, error function, logistic sigmoid and tanh for float written without
// branches or library calls, so that the elementwise loops calling them
// vectorise (libm's expf and erff are scalar calls, and they dominated
// Softmax, Gelu and SwiGLU). Other compute types keep the standard library.
//
// Accuracy, checked against libm over the whole float range by
// tests/cpu_ep/vector_math_test.cpp: Exp within 2 ulp (results below
// FLT_MIN flush to zero, above FLT_MAX give +inf, NaN stays NaN); Erf
// within 4e-7 absolute and 1e-6 relative; Sigmoid within 3 ulp; Tanh
// within 5 ulp.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace nxrt::cpu {

inline float ExpFloat(float x) {
  constexpr float kMax = 88.72283935546875f;   // largest x with a finite expf
  constexpr float kMin = -87.33654022216797f;  // smallest x with a normal result
  constexpr float kLog2e = 1.44269504088896341f;
  // ln 2 split in two so n * ln2 subtracts exactly for |n| <= 128.
  constexpr float kLn2Hi = 0.693145751953125f;
  constexpr float kLn2Lo = 1.428606765330187e-06f;
  // Adding and removing 1.5 * 2^23 rounds to the nearest integer.
  constexpr float kRound = 12582912.0f;
  // NaN takes the path of 0 (float to int of NaN is undefined) and is put
  // back at the end.
  const float finite = x != x ? 0.0f : x;
  const float clamped = finite < kMin ? kMin : (finite > kMax ? kMax : finite);
  const float n = (clamped * kLog2e + kRound) - kRound;
  const float r = (clamped - n * kLn2Hi) - n * kLn2Lo;
  // Taylor terms to r^7: |r| <= ln2 / 2 keeps the truncation under 1 ulp.
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // 2^n for n in [-126, 128] in two factors, so n = 128 does not overflow
  // the exponent field before the product does.
  const int32_t e = static_cast<int32_t>(n);
  const int32_t half = e >> 1;
  const float scale_a = std::bit_cast<float>((half + 127) << 23);
  const float scale_b = std::bit_cast<float>((e - half + 127) << 23);
  const float y = p * scale_a * scale_b;
  const float big = x > kMax ? std::numeric_limits<float>::infinity() : y;
  const float result = x < kMin ? 0.0f : big;
  return x != x ? x : result;
}

inline float ErfFloat(float x) {
  const float a = std::fabs(x);
  // Near zero the odd Taylor series to x^13; |x| < 0.5 keeps the next term
  // under 1e-9.
  const float s = a * a;
  float t = -1.0f / 75600.0f;
  t = t * s + 1.0f / 9360.0f;
  t = t * s - 1.0f / 1320.0f;
  t = t * s + 1.0f / 216.0f;
  t = t * s - 1.0f / 42.0f;
  t = t * s + 1.0f / 10.0f;
  t = t * s - 1.0f / 3.0f;
  t = t * s + 1.0f;
  const float small = 1.1283791670955126f * a * t;
  // Elsewhere Abramowitz and Stegun 7.1.26: 1 - poly(k) exp(-x^2), with
  // k = 1 / (1 + 0.3275911 |x|); its absolute error is below 1.5e-7.
  const float k = 1.0f / (1.0f + 0.3275911f * a);
  float q = 1.061405429f;
  q = q * k - 1.453152027f;
  q = q * k + 1.421413741f;
  q = q * k - 0.284496736f;
  q = q * k + 0.254829592f;
  const float large = 1.0f - q * k * ExpFloat(-s);
  const float magnitude = a < 0.5f ? small : large;
  return std::copysign(magnitude, x);
}

inline float SigmoidFloat(float x) {
  // exp of -|x| never overflows; the negative half is e / (1 + e).
  const float e = ExpFloat(-std::fabs(x));
  const float s = 1.0f / (1.0f + e);
  return x >= 0.0f ? s : e * s;
}

inline float TanhFloat(float x) {
  const float a = std::fabs(x);
  // Near zero the odd Taylor series to x^13; |x| < 0.3 keeps the next term
  // under 1e-10 of the result.
  const float s = a * a;
  float p = 21844.0f / 6081075.0f;
  p = p * s - 1382.0f / 155925.0f;
  p = p * s + 62.0f / 2835.0f;
  p = p * s - 17.0f / 315.0f;
  p = p * s + 2.0f / 15.0f;
  p = p * s - 1.0f / 3.0f;
  p = p * s + 1.0f;
  const float small = a * p;
  // Elsewhere (1 - e) / (1 + e) with e = exp(-2|x|) <= 0.55, where 1 - e
  // loses little.
  const float e = ExpFloat(-2.0f * a);
  const float large = (1.0f - e) / (1.0f + e);
  const float magnitude = a < 0.3f ? small : large;
  return std::copysign(magnitude, x);
}

// The same for any compute type: float takes the forms above.
namespace math {

template <typename C>
C Exp(C x) {
  if constexpr (std::is_same_v<C, float>) {
    return ExpFloat(x);
  } else {
    return std::exp(x);
  }
}

template <typename C>
C Erf(C x) {
  if constexpr (std::is_same_v<C, float>) {
    return ErfFloat(x);
  } else {
    return std::erf(x);
  }
}

template <typename C>
C Tanh(C x) {
  if constexpr (std::is_same_v<C, float>) {
    return TanhFloat(x);
  } else {
    return std::tanh(x);
  }
}

template <typename C>
C Sigmoid(C x) {
  if constexpr (std::is_same_v<C, float>) {
    return SigmoidFloat(x);
  } else {
    return x >= 0 ? C(1) / (C(1) + std::exp(-x)) : std::exp(x) / (C(1) + std::exp(x));
  }
}

}  // namespace math
}  // namespace nxrt::cpu
