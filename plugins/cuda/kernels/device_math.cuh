// Device-side conversions between the stored element types and the float
// (or integer) the kernels compute in, and the block-wide reductions of the
// row and attention kernels, shared by the CUDA EP's kernel files.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
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

enum class Combine { kSum, kMax };

// Combines `value` over the thread block; every thread receives the result.
// blockDim.x is a multiple of 32 and `scratch` holds blockDim.x / 32 floats.
template <Combine kind>
__device__ __forceinline__ float BlockReduce(float value, float* scratch) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, value, offset);
    value = kind == Combine::kSum ? value + other : fmaxf(value, other);
  }
  const unsigned warp = threadIdx.x / 32;
  const unsigned lane = threadIdx.x % 32;
  __syncthreads();  // scratch may still be read by a previous reduction
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  const float identity = kind == Combine::kSum ? 0.0f : -INFINITY;
  value = lane < blockDim.x / 32 ? scratch[lane] : identity;
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, value, offset);
    value = kind == Combine::kSum ? value + other : fmaxf(value, other);
  }
  return value;
}

// Replaces scores[0, count) in shared memory by exp(score - max) and returns
// the reciprocal of their sum, so a caller scales its weighted sum once; 0
// when every score is -inf (a fully masked row). Ends with every score final
// and visible to the whole block.
__device__ __forceinline__ float BlockSoftmaxInPlace(float* scores, int64_t count, float* scratch) {
  float largest = -INFINITY;
  for (int64_t j = threadIdx.x; j < count; j += blockDim.x) largest = fmaxf(largest, scores[j]);
  largest = BlockReduce<Combine::kMax>(largest, scratch);
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
    scores[j] = largest == -INFINITY ? 0.0f : expf(scores[j] - largest);
    sum += scores[j];
  }
  sum = BlockReduce<Combine::kSum>(sum, scratch);
  __syncthreads();
  return sum > 0.0f ? 1.0f / sum : 0.0f;
}

inline unsigned BlocksFor(int64_t count, unsigned threads) {
  const int64_t blocks = (count + threads - 1) / threads;
  // A grid-stride loop covers the rest.
  return static_cast<unsigned>(blocks < 65535 * 16 ? (blocks > 0 ? blocks : 1) : 65535 * 16);
}

}  // namespace nxrt::cuda
