// The 8- and 4-bit float formats (float8e4m3fn, float8e4m3fnuz, float8e5m2,
// float8e5m2fnuz, float8e8m0, float4e2m1) as codes in the low bits of a
// byte, converted to and from float. Every code is exact in float, so
// decoding is exact; encoding rounds to nearest even (float8e8m0 by its own
// rounding mode) and handles out-of-range values as ONNX Cast's `saturate`
// says: the largest finite value, or else infinity where the format has one
// and NaN where it does not.
#pragma once

#include <cstdint>

#include "nxrt/ep_abi.h"

namespace nxrt::cpu {

// How float8e8m0, a bare power of two, rounds a value between two powers:
// to the larger, to the smaller, or to the nearer with ties to the larger.
enum class E8M0Rounding { kUp, kDown, kNearest };

bool IsSmallFloat(nxrt_dtype dtype);
float SmallFloatToFloat(nxrt_dtype dtype, uint8_t code);
uint8_t SmallFloatFromFloat(nxrt_dtype dtype, float value, bool saturate,
                            E8M0Rounding rounding = E8M0Rounding::kUp);

}  // namespace nxrt::cpu
