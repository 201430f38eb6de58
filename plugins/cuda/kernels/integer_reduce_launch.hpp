// Host-callable launcher of the integer sum over any set of axes (ReduceSum
// over int32 and int64). Exact: integers add in their own type, wrapping on
// overflow. Enqueues on the given stream without host sync or allocation.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/launchers.hpp"
#include "nxrt/ep_abi.h"

namespace nxrt::cuda {

// Output element o sums the input elements at offset(o) + offset(r) for every
// r: `kept` decomposes o over the kept axes, `reduced` decomposes r over the
// reduced ones, each with the input element strides of its axes.
struct ReduceGeometry {
  int kept_rank = 0;
  int64_t kept_dims[kMaxDims] = {};
  int64_t kept_strides[kMaxDims] = {};
  int reduced_rank = 0;
  int64_t reduced_dims[kMaxDims] = {};
  int64_t reduced_strides[kMaxDims] = {};
  int64_t reduced_count = 1;
};

// `dtype` is int32 or int64.
void LaunchIntegerReduceSum(nxrt_dtype dtype, const void* in, void* out,
                            const ReduceGeometry& geometry, int64_t out_count, cudaStream_t stream);

}  // namespace nxrt::cuda
