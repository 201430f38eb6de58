#include "small_float.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace nxrt::cpu {
namespace {

// A sign-magnitude format: 1 sign bit, `exponent_bits`, `mantissa_bits`.
// `unsigned_zero` formats (fnuz) have no negative zero and use the
// negative-zero code 0x80 as their only NaN.
struct Format {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  uint8_t max_code;  // the largest finite magnitude
  bool has_infinity;
  bool unsigned_zero;
  bool has_nan;
};

Format FormatOf(nxrt_dtype dtype) {
  switch (dtype) {
    case NXRT_DTYPE_FLOAT8E4M3FN:
      return {4, 3, 7, 0x7E, false, false, true};
    case NXRT_DTYPE_FLOAT8E4M3FNUZ:
      return {4, 3, 8, 0x7F, false, true, true};
    case NXRT_DTYPE_FLOAT8E5M2:
      return {5, 2, 15, 0x7B, true, false, true};
    case NXRT_DTYPE_FLOAT8E5M2FNUZ:
      return {5, 2, 16, 0x7F, false, true, true};
    default:  // float4e2m1: no infinity and no NaN
      return {2, 1, 1, 0x7, false, false, false};
  }
}

int SignShift(const Format& f) {
  return f.exponent_bits + f.mantissa_bits;
}

// The NaN a conversion produces (float8e5m2 also reads 0x7D and 0x7F as NaN).
uint8_t NanCode(const Format& f) {
  if (f.unsigned_zero) return 0x80;
  if (f.has_infinity) return static_cast<uint8_t>(f.max_code + 3);
  return static_cast<uint8_t>((1u << SignShift(f)) - 1);  // all ones but the sign
}

double Decode(const Format& f, uint8_t code) {
  const uint8_t sign_bit = static_cast<uint8_t>(1u << SignShift(f));
  const uint8_t magnitude = code & (sign_bit - 1);
  if (f.unsigned_zero && code == 0x80) return std::numeric_limits<double>::quiet_NaN();
  const int exponent = magnitude >> f.mantissa_bits;
  const int mantissa = magnitude & ((1 << f.mantissa_bits) - 1);
  const int top_exponent = (1 << f.exponent_bits) - 1;
  if (f.has_infinity && exponent == top_exponent) {
    const double special = mantissa == 0 ? std::numeric_limits<double>::infinity() : std::nan("");
    return (code & sign_bit) ? -special : special;
  }
  if (f.has_nan && !f.has_infinity && !f.unsigned_zero && magnitude == NanCode(f)) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  const double value = exponent == 0 ? std::ldexp(mantissa, 1 - f.bias - f.mantissa_bits)
                                     : std::ldexp((1 << f.mantissa_bits) + mantissa,
                                                  exponent - f.bias - f.mantissa_bits);
  return (code & sign_bit) ? -value : value;
}

uint8_t Encode(const Format& f, float value, bool saturate) {
  const uint8_t sign = std::signbit(value) ? static_cast<uint8_t>(1u << SignShift(f)) : 0;
  // float4e2m1 has no NaN: ONNX maps NaN to its negative-zero code.
  if (std::isnan(value)) return static_cast<uint8_t>(f.has_nan ? sign | NanCode(f) : 0x8);
  // Too large (infinity included): the largest finite value, or else
  // infinity, or NaN. float4e2m1 has neither, so it always saturates.
  const auto overflow = [&] {
    if (saturate || !f.has_nan) return static_cast<uint8_t>(sign | f.max_code);
    if (f.has_infinity) return static_cast<uint8_t>(sign | (f.max_code + 1));
    return static_cast<uint8_t>(f.unsigned_zero ? 0x80 : sign | NanCode(f));
  };
  if (std::isinf(value)) return overflow();
  const double magnitude = std::fabs(static_cast<double>(value));
  const int min_exponent = 1 - f.bias;  // of the normal numbers
  int e = 0;
  std::frexp(magnitude, &e);
  const int exponent = std::max(e - 1, min_exponent);
  // Round to a multiple of the spacing at this exponent: nearbyint rounds
  // ties to even, and the multiple is exact in double.
  const double step = std::ldexp(1.0, exponent - f.mantissa_bits);
  const double rounded = std::nearbyint(magnitude / step) * step;
  if (rounded > Decode(f, f.max_code)) return overflow();
  if (rounded == 0) return f.unsigned_zero ? 0 : sign;
  std::frexp(rounded, &e);
  if (e - 1 < min_exponent) {  // subnormal: exponent field 0
    return static_cast<uint8_t>(
        sign | static_cast<int>(std::ldexp(rounded, f.mantissa_bits - min_exponent)));
  }
  const int mantissa =
      static_cast<int>(std::ldexp(rounded, f.mantissa_bits - (e - 1))) - (1 << f.mantissa_bits);
  return static_cast<uint8_t>(sign | ((e - 1 + f.bias) << f.mantissa_bits) | mantissa);
}

// float8e8m0 is 2^(code - 127) with no sign and no zero; 0xFF is NaN.
constexpr uint8_t kE8M0Nan = 0xFF;
constexpr uint8_t kE8M0Max = 0xFE;

uint8_t EncodeE8M0(float value, bool saturate, E8M0Rounding rounding) {
  if (std::isnan(value)) return kE8M0Nan;
  if (std::isinf(value)) return saturate ? kE8M0Max : kE8M0Nan;
  // The sign is dropped: the float's exponent field is the code, and its
  // mantissa says where the value lies between two powers of two.
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  int exponent = static_cast<int>((bits >> 23) & 0xFF);
  uint32_t mantissa = bits & 0x7FFFFFu;
  uint32_t half = 0x400000u;  // 1.5 times the power below
  if (exponent == 0) {        // float subnormal: 2^-127 is the power below
    if (mantissa <= 0x400000u) return 0;
    mantissa -= 0x400000u;
    half = 0x200000u;
  }
  if ((rounding == E8M0Rounding::kUp && mantissa != 0) ||
      (rounding == E8M0Rounding::kNearest && mantissa >= half)) {
    ++exponent;
  }
  if (exponent > kE8M0Max) return saturate ? kE8M0Max : kE8M0Nan;
  return static_cast<uint8_t>(exponent);
}

}  // namespace

bool IsSmallFloat(nxrt_dtype dtype) {
  switch (dtype) {
    case NXRT_DTYPE_FLOAT8E4M3FN:
    case NXRT_DTYPE_FLOAT8E4M3FNUZ:
    case NXRT_DTYPE_FLOAT8E5M2:
    case NXRT_DTYPE_FLOAT8E5M2FNUZ:
    case NXRT_DTYPE_FLOAT8E8M0:
    case NXRT_DTYPE_FLOAT4E2M1:
      return true;
    default:
      return false;
  }
}

float SmallFloatToFloat(nxrt_dtype dtype, uint8_t code) {
  if (dtype == NXRT_DTYPE_FLOAT8E8M0) {
    return code == kE8M0Nan ? std::numeric_limits<float>::quiet_NaN()
                            : std::ldexp(1.0f, static_cast<int>(code) - 127);
  }
  return static_cast<float>(Decode(FormatOf(dtype), code));
}

uint8_t SmallFloatFromFloat(nxrt_dtype dtype, float value, bool saturate, E8M0Rounding rounding) {
  if (dtype == NXRT_DTYPE_FLOAT8E8M0) return EncodeE8M0(value, saturate, rounding);
  return Encode(FormatOf(dtype), value, saturate);
}

}  // namespace nxrt::cpu
