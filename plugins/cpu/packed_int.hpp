// Sub-byte elements (int4, uint4, int2, uint2 and the float4e2m1 codes):
// packed in bytes with element 0 in the lowest bits, so a tensor of n
// elements takes ceil(n * bits / 8) bytes and the unused high bits of the
// last byte are zero.
#pragma once

#include <cstdint>

#include "nxrt/ep_abi.h"

namespace nxrt::cpu {

// Bits per element of a packed dtype: 4 or 2; 0 for every other dtype.
int PackedBits(nxrt_dtype dtype);
// Whether dtype is one of the packed integers (int4, uint4, int2, uint2).
bool IsPackedInt(nxrt_dtype dtype);

// The raw code of element i, in its low `bits` bits.
inline uint8_t PackedCode(const void* data, int bits, int64_t i) {
  const int per_byte = 8 / bits;
  const uint8_t byte = static_cast<const uint8_t*>(data)[i / per_byte];
  return static_cast<uint8_t>((byte >> ((i % per_byte) * bits)) & ((1u << bits) - 1));
}

// Stores `code` as element i, leaving the other elements of its byte as
// they are.
inline void SetPackedCode(void* data, int bits, int64_t i, uint8_t code) {
  const int per_byte = 8 / bits;
  const int shift = static_cast<int>(i % per_byte) * bits;
  const uint8_t mask = static_cast<uint8_t>(((1u << bits) - 1) << shift);
  uint8_t& byte = static_cast<uint8_t*>(data)[i / per_byte];
  byte = static_cast<uint8_t>((byte & ~mask) | ((code << shift) & mask));
}

// The value of element i of a packed integer tensor (sign-extended for
// int4 and int2).
int32_t PackedIntAt(nxrt_dtype dtype, const void* data, int64_t i);
// Stores `value`, clamped to the dtype's range, as element i.
void SetPackedInt(nxrt_dtype dtype, void* data, int64_t i, int64_t value);

}  // namespace nxrt::cpu
