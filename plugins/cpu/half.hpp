// float16 and bfloat16 storage types. Kernels compute on them in float; the
// conversions round to nearest even and keep NaN, infinities and subnormals,
// so a round trip through float never changes a representable value.
#pragma once

#include <bit>
#include <cstdint>

namespace nxrt::cpu {

struct Float16 {
  uint16_t bits = 0;

  Float16() = default;
  explicit Float16(float value) : bits(FromFloat(value)) {}
  operator float() const { return ToFloat(bits); }  // NOLINT: float is its compute type

  static uint16_t FromFloat(float value) {
    const uint32_t f = std::bit_cast<uint32_t>(value);
    const uint32_t sign = (f >> 16) & 0x8000u;
    const uint32_t magnitude = f & 0x7FFFFFFFu;
    if (magnitude >= 0x7F800000u) {  // infinity or NaN
      return static_cast<uint16_t>(sign | 0x7C00u | (magnitude > 0x7F800000u ? 0x200u : 0u));
    }
    if (magnitude >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // overflow
    if (magnitude < 0x38800000u) {  // half subnormal or zero: let the FPU round
      const float shifted = std::bit_cast<float>(magnitude) + 0.5f;
      return static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(shifted) - 0x3F000000u));
    }
    const uint32_t odd = (magnitude >> 13) & 1u;
    const uint32_t rounded = magnitude + 0xC8000FFFu + odd;  // rebias and round to even
    return static_cast<uint16_t>(sign | (rounded >> 13));
  }

  static float ToFloat(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exponent = (h >> 10) & 0x1Fu;
    const uint32_t mantissa = h & 0x3FFu;
    if (exponent == 0x1Fu) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
    if (exponent == 0) {  // subnormal or zero: exact in float
      const float value = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
      return sign ? -value : value;
    }
    return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  }
};

struct BFloat16 {
  uint16_t bits = 0;

  BFloat16() = default;
  explicit BFloat16(float value) : bits(FromFloat(value)) {}
  operator float() const { return ToFloat(bits); }  // NOLINT: float is its compute type

  static uint16_t FromFloat(float value) {
    const uint32_t f = std::bit_cast<uint32_t>(value);
    if ((f & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((f >> 16) | 0x40u);  // NaN
    const uint32_t rounding = 0x7FFFu + ((f >> 16) & 1u);
    return static_cast<uint16_t>((f + rounding) >> 16);
  }
  static float ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }
};

static_assert(sizeof(Float16) == 2 && sizeof(BFloat16) == 2);

}  // namespace nxrt::cpu
