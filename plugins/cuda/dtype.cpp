#include "dtype.hpp"

namespace nxrt::cuda {

bool IsDeviceWord(nxrt_dtype dtype) {
  if (dtype == NXRT_DTYPE_STRING) return false;
  const size_t size = ElementSize(dtype);
  return size == 1 || size == 2 || size == 4 || size == 8;
}

bool IsComputeFloat(nxrt_dtype dtype) {
  return dtype == NXRT_DTYPE_FLOAT32 || dtype == NXRT_DTYPE_FLOAT16 || dtype == NXRT_DTYPE_BFLOAT16;
}

bool IsCastable(nxrt_dtype dtype) {
  return IsComputeFloat(dtype) || dtype == NXRT_DTYPE_INT32 || dtype == NXRT_DTYPE_INT64;
}

int64_t ElementCount(std::span<const int64_t> dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

}  // namespace nxrt::cuda
