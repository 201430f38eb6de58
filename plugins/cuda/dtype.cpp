#include "dtype.hpp"

namespace nxrt::cuda {

size_t ElementSize(nxrt_dtype dtype) {
  switch (dtype) {
    case NXRT_DTYPE_UINT8:
    case NXRT_DTYPE_INT8:
    case NXRT_DTYPE_BOOL:
    case NXRT_DTYPE_FLOAT8E4M3FN:
    case NXRT_DTYPE_FLOAT8E4M3FNUZ:
    case NXRT_DTYPE_FLOAT8E5M2:
    case NXRT_DTYPE_FLOAT8E5M2FNUZ:
    case NXRT_DTYPE_FLOAT8E8M0:
      return 1;
    case NXRT_DTYPE_UINT16:
    case NXRT_DTYPE_INT16:
    case NXRT_DTYPE_FLOAT16:
    case NXRT_DTYPE_BFLOAT16:
      return 2;
    case NXRT_DTYPE_FLOAT32:
    case NXRT_DTYPE_INT32:
    case NXRT_DTYPE_UINT32:
      return 4;
    case NXRT_DTYPE_INT64:
    case NXRT_DTYPE_UINT64:
    case NXRT_DTYPE_FLOAT64:
    case NXRT_DTYPE_COMPLEX64:
      return 8;
    default:
      return 0;
  }
}

std::string DtypeName(nxrt_dtype dtype) {
  switch (dtype) {
    case NXRT_DTYPE_FLOAT32:
      return "float32";
    case NXRT_DTYPE_FLOAT16:
      return "float16";
    case NXRT_DTYPE_BFLOAT16:
      return "bfloat16";
    case NXRT_DTYPE_FLOAT64:
      return "float64";
    case NXRT_DTYPE_INT8:
      return "int8";
    case NXRT_DTYPE_UINT8:
      return "uint8";
    case NXRT_DTYPE_INT16:
      return "int16";
    case NXRT_DTYPE_UINT16:
      return "uint16";
    case NXRT_DTYPE_INT32:
      return "int32";
    case NXRT_DTYPE_UINT32:
      return "uint32";
    case NXRT_DTYPE_INT64:
      return "int64";
    case NXRT_DTYPE_UINT64:
      return "uint64";
    case NXRT_DTYPE_BOOL:
      return "bool";
    case NXRT_DTYPE_STRING:
      return "string";
    default:
      return "dtype " + std::to_string(static_cast<int>(dtype));
  }
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
