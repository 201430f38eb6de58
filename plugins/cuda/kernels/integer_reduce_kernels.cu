// The integer sum over any set of axes: one thread per output element walks
// its reduced elements. Integer ReduceSum serves bookkeeping (mask lengths,
// counts) over few elements, so a simple exact loop suffices.
#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "cuda_check.hpp"
#include "dtype.hpp"
#include "kernels/device_math.cuh"
#include "kernels/integer_reduce_launch.hpp"

namespace nxrt::cuda {
namespace {

constexpr unsigned kThreads = 256;

template <typename T>
__global__ void IntegerReduceSumKernel(const T* in, T* out, ReduceGeometry g, int64_t out_count) {
  // Unsigned addition wraps where signed overflow would be undefined.
  using Unsigned = std::make_unsigned_t<T>;
  for (int64_t o = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; o < out_count;
       o += int64_t{gridDim.x} * blockDim.x) {
    int64_t base = 0;
    int64_t rest = o;
    for (int d = g.kept_rank - 1; d >= 0; --d) {
      base += (rest % g.kept_dims[d]) * g.kept_strides[d];
      rest /= g.kept_dims[d];
    }
    Unsigned total = 0;
    for (int64_t r = 0; r < g.reduced_count; ++r) {
      int64_t offset = base;
      int64_t left = r;
      for (int d = g.reduced_rank - 1; d >= 0; --d) {
        offset += (left % g.reduced_dims[d]) * g.reduced_strides[d];
        left /= g.reduced_dims[d];
      }
      total += static_cast<Unsigned>(in[offset]);
    }
    out[o] = static_cast<T>(total);
  }
}

template <typename T>
void Launch(const void* in, void* out, const ReduceGeometry& geometry, int64_t out_count,
            cudaStream_t stream) {
  IntegerReduceSumKernel<T><<<BlocksFor(out_count, kThreads), kThreads, 0, stream>>>(
      static_cast<const T*>(in), static_cast<T*>(out), geometry, out_count);
}

}  // namespace

void LaunchIntegerReduceSum(nxrt_dtype dtype, const void* in, void* out,
                            const ReduceGeometry& geometry, int64_t out_count,
                            cudaStream_t stream) {
  if (out_count == 0) return;
  if (dtype == NXRT_DTYPE_INT64) {
    Launch<int64_t>(in, out, geometry, out_count, stream);
  } else if (dtype == NXRT_DTYPE_INT32) {
    Launch<int32_t>(in, out, geometry, out_count, stream);
  } else {
    throw sdk::Error(NXRT_STATUS_UNSUPPORTED, "no CUDA integer sum for " + DtypeName(dtype));
  }
  CheckLaunch("integer reduce-sum kernel launch");
}

}  // namespace nxrt::cuda
