// Device-side conversions between the stored element types and the float
// (or integer) the kernels compute in, shared by the CUDA EP's kernel files.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "nxrt/ep_abi.h"

namespace nxrt::cuda {

template <typename T>
__device__ __forceinline__ float ToFloat(T value) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(value);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(value);
  } else {
    return static_cast<float>(value);
  }
}

template <typename T>
__device__ __forceinline__ T FromFloat(float value) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half(value);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16(value);
  } else {
    return static_cast<T>(value);
  }
}

template <typename T>
constexpr bool kIsReducedFloat = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

// Integers convert exactly between themselves; 16-bit floats go through float.
template <typename To, typename From>
__device__ __forceinline__ To Convert(From value) {
  if constexpr (kIsReducedFloat<From>) {
    return FromFloat<To>(ToFloat(value));
  } else if constexpr (kIsReducedFloat<To>) {
    return FromFloat<To>(static_cast<float>(value));
  } else {
    return static_cast<To>(value);
  }
}

// Calls body(T{}) for a compute-float dtype (the argument only names the
// type); false for other dtypes.
template <typename Body>
bool DispatchFloat(nxrt_dtype dtype, Body&& body) {
  switch (dtype) {
    case NXRT_DTYPE_FLOAT32:
      body(float{});
      return true;
    case NXRT_DTYPE_FLOAT16:
      body(__half{});
      return true;
    case NXRT_DTYPE_BFLOAT16:
      body(__nv_bfloat16{});
      return true;
    default:
      return false;
  }
}

inline unsigned BlocksFor(int64_t count, unsigned threads) {
  const int64_t blocks = (count + threads - 1) / threads;
  // A grid-stride loop covers the rest.
  return static_cast<unsigned>(blocks < 65535 * 16 ? (blocks > 0 ? blocks : 1) : 65535 * 16);
}

}  // namespace nxrt::cuda
