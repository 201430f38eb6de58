#include "packed_int.hpp"

#include <algorithm>

namespace nxrt::cpu {

int PackedBits(nxrt_dtype dtype) {
  switch (dtype) {
    case NXRT_DTYPE_INT4:
    case NXRT_DTYPE_UINT4:
    case NXRT_DTYPE_FLOAT4E2M1:
      return 4;
    case NXRT_DTYPE_INT2:
    case NXRT_DTYPE_UINT2:
      return 2;
    default:
      return 0;
  }
}

bool IsPackedInt(nxrt_dtype dtype) {
  return dtype == NXRT_DTYPE_INT4 || dtype == NXRT_DTYPE_UINT4 || dtype == NXRT_DTYPE_INT2 ||
         dtype == NXRT_DTYPE_UINT2;
}

namespace {

bool IsSigned(nxrt_dtype dtype) {
  return dtype == NXRT_DTYPE_INT4 || dtype == NXRT_DTYPE_INT2;
}

}  // namespace

int32_t PackedIntAt(nxrt_dtype dtype, const void* data, int64_t i) {
  const int bits = PackedBits(dtype);
  const int32_t code = PackedCode(data, bits, i);
  const int32_t half = 1 << (bits - 1);
  return IsSigned(dtype) && code >= half ? code - 2 * half : code;
}

void SetPackedInt(nxrt_dtype dtype, void* data, int64_t i, int64_t value) {
  const int bits = PackedBits(dtype);
  const int64_t lo = IsSigned(dtype) ? -(int64_t{1} << (bits - 1)) : 0;
  const int64_t hi = (IsSigned(dtype) ? int64_t{1} << (bits - 1) : int64_t{1} << bits) - 1;
  SetPackedCode(data, bits, i, static_cast<uint8_t>(std::clamp(value, lo, hi)));
}

}  // namespace nxrt::cpu
