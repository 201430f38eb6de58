// Host-callable launchers of the CUDA EP's device kernels. Each enqueues on
// the given stream and returns at once: no host sync, no allocation, all
// geometry passed by value, so every launch may be recorded into a CUDA
// graph. Arithmetic kernels compute in float for float16 and bfloat16.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "nxrt/ep_abi.h"

namespace nxrt::cuda {

constexpr int kMaxDims = 8;

enum class UnaryOp { kRelu, kSigmoid, kTanh, kNeg, kExp, kSqrt, kErf, kGelu, kGeluTanh };
enum class BinaryOp { kAdd, kSub, kMul, kDiv, kPow };

// Output extents and, per operand, the element stride of each output axis (0
// along a broadcast axis). `same_shape` skips the index arithmetic.
struct BinaryGeometry {
  int rank = 0;
  bool same_shape = false;
  int64_t dims[kMaxDims] = {};
  int64_t a_strides[kMaxDims] = {};
  int64_t b_strides[kMaxDims] = {};
};

// Output extents, the input element stride of each output axis, and the
// input element where output element 0 comes from: transposes, slices and
// broadcasts are all this one gather.
struct CopyGeometry {
  int rank = 0;
  int64_t dims[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
  int64_t offset = 0;
};

void LaunchUnary(UnaryOp op, nxrt_dtype dtype, const void* in, void* out, int64_t count,
                 cudaStream_t stream);
void LaunchBinary(BinaryOp op, nxrt_dtype dtype, const void* a, const void* b, void* out,
                  const BinaryGeometry& geometry, int64_t count, cudaStream_t stream);
void LaunchCast(nxrt_dtype from, nxrt_dtype to, const void* in, void* out, int64_t count,
                cudaStream_t stream);
void LaunchStridedCopy(size_t element_size, const void* in, void* out, const CopyGeometry& geometry,
                       int64_t count, cudaStream_t stream);
// out[o, i, n] = data[o, indices[i], n]; negative indices count from the end,
// and indices outside the axis yield zeros rather than reading out of bounds.
void LaunchGather(size_t element_size, const void* data, const void* indices, bool indices_int64,
                  void* out, int64_t outer, int64_t axis_extent, int64_t index_count, int64_t inner,
                  cudaStream_t stream);

// Row kernels over the last axis of a [rows, cols] view.
void LaunchSoftmax(nxrt_dtype dtype, const void* in, void* out, int64_t rows, int64_t cols,
                   cudaStream_t stream);
// Layer normalisation (mean removed) or RMS normalisation, times `scale`,
// plus `bias` when not null.
void LaunchNormalization(nxrt_dtype dtype, const void* in, const void* scale, const void* bias,
                         void* out, int64_t rows, int64_t cols, float epsilon, bool rms,
                         cudaStream_t stream);
void LaunchReduceLastAxis(nxrt_dtype dtype, const void* in, void* out, int64_t rows, int64_t cols,
                          bool mean, cudaStream_t stream);

}  // namespace nxrt::cuda
