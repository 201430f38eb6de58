// nxrt EP SDK: the element types of ep_abi.h as an EP sees them: bytes per
// element in a tensor's buffer, and the name to put in a message. Part of
// the header-only SDK (ep_sdk.hpp includes it); depends on the C++ standard
// library and ep_abi.h only.
#pragma once

#include <cstddef>
#include <string>

#include "nxrt/ep_abi.h"

namespace nxrt::sdk {

// Bytes one element takes in a tensor's buffer: a nxrt_string_view for
// strings (the buffer holds views, see nxrt_tensor), 0 for the packed
// sub-byte types (int4, uint4, float4e2m1, int2, uint2) and for undefined or
// unknown codes, which have no whole-byte size.
constexpr size_t ElementSize(nxrt_dtype dtype) {
  switch (dtype) {
    case NXRT_DTYPE_BOOL:
    case NXRT_DTYPE_INT8:
    case NXRT_DTYPE_UINT8:
    case NXRT_DTYPE_FLOAT8E4M3FN:
    case NXRT_DTYPE_FLOAT8E4M3FNUZ:
    case NXRT_DTYPE_FLOAT8E5M2:
    case NXRT_DTYPE_FLOAT8E5M2FNUZ:
    case NXRT_DTYPE_FLOAT8E8M0:
      return 1;
    case NXRT_DTYPE_INT16:
    case NXRT_DTYPE_UINT16:
    case NXRT_DTYPE_FLOAT16:
    case NXRT_DTYPE_BFLOAT16:
      return 2;
    case NXRT_DTYPE_INT32:
    case NXRT_DTYPE_UINT32:
    case NXRT_DTYPE_FLOAT32:
      return 4;
    case NXRT_DTYPE_INT64:
    case NXRT_DTYPE_UINT64:
    case NXRT_DTYPE_FLOAT64:
    case NXRT_DTYPE_COMPLEX64:
      return 8;
    case NXRT_DTYPE_COMPLEX128:
      return 16;
    case NXRT_DTYPE_STRING:
      return sizeof(nxrt_string_view);
    default:
      return 0;
  }
}

// The ONNX name of `dtype` ("float32", "bfloat16", "string"...), or
// "dtype N" for a code this header does not know.
inline std::string DtypeName(nxrt_dtype dtype) {
  switch (dtype) {
    case NXRT_DTYPE_UNDEFINED:
      return "undefined";
    case NXRT_DTYPE_FLOAT32:
      return "float32";
    case NXRT_DTYPE_UINT8:
      return "uint8";
    case NXRT_DTYPE_INT8:
      return "int8";
    case NXRT_DTYPE_UINT16:
      return "uint16";
    case NXRT_DTYPE_INT16:
      return "int16";
    case NXRT_DTYPE_INT32:
      return "int32";
    case NXRT_DTYPE_INT64:
      return "int64";
    case NXRT_DTYPE_STRING:
      return "string";
    case NXRT_DTYPE_BOOL:
      return "bool";
    case NXRT_DTYPE_FLOAT16:
      return "float16";
    case NXRT_DTYPE_FLOAT64:
      return "float64";
    case NXRT_DTYPE_UINT32:
      return "uint32";
    case NXRT_DTYPE_UINT64:
      return "uint64";
    case NXRT_DTYPE_COMPLEX64:
      return "complex64";
    case NXRT_DTYPE_COMPLEX128:
      return "complex128";
    case NXRT_DTYPE_BFLOAT16:
      return "bfloat16";
    case NXRT_DTYPE_FLOAT8E4M3FN:
      return "float8e4m3fn";
    case NXRT_DTYPE_FLOAT8E4M3FNUZ:
      return "float8e4m3fnuz";
    case NXRT_DTYPE_FLOAT8E5M2:
      return "float8e5m2";
    case NXRT_DTYPE_FLOAT8E5M2FNUZ:
      return "float8e5m2fnuz";
    case NXRT_DTYPE_UINT4:
      return "uint4";
    case NXRT_DTYPE_INT4:
      return "int4";
    case NXRT_DTYPE_FLOAT4E2M1:
      return "float4e2m1";
    case NXRT_DTYPE_FLOAT8E8M0:
      return "float8e8m0";
    case NXRT_DTYPE_UINT2:
      return "uint2";
    case NXRT_DTYPE_INT2:
      return "int2";
  }
  return "dtype " + std::to_string(static_cast<int>(dtype));
}

}  // namespace nxrt::sdk
