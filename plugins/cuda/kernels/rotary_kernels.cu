// RotaryEmbedding on the device: one thread per element of X, in X's own
// layout, computing in float for float16 and bfloat16.
#include <cuda_runtime.h>

#include <cmath>
#include <string>

#include "cuda_check.hpp"
#include "dtype.hpp"
#include "kernels/device_math.cuh"
#include "kernels/rotary_launch.hpp"
#include "kernels/rotary_math.cuh"

namespace nxrt::cuda {
namespace {

constexpr unsigned kThreads = 256;

template <typename T>
__global__ void RotaryKernel(RotaryArgs a, int64_t count) {
  const T* in = static_cast<const T*>(a.input);
  const T* cos = static_cast<const T*>(a.cos_cache);
  const T* sin = static_cast<const T*>(a.sin_cache);
  T* out = static_cast<T*>(a.output);
  const int64_t half = a.rotary_dim / 2;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t d = e % a.head_size;
    if (d >= a.rotary_dim) {
      out[e] = in[e];
      continue;
    }
    const int64_t token = e / a.head_size;  // (b, s, n) or (b, n, s)
    const int64_t s = a.heads_first ? token % a.seq : token / a.heads % a.seq;
    const int64_t b = a.heads_first ? token / a.seq / a.heads : token / a.heads / a.seq;
    int64_t row = b * a.seq + s;
    if (a.position_ids != nullptr) {
      row = a.single_offset ? a.position_ids[0] + s : a.position_ids[row];
    }
    if (row < 0 || row >= a.cache_rows) {
      out[e] = FromFloat<T>(NAN);
      continue;
    }
    out[e] = FromFloat<T>(RotaryElement(in + (e - d), cos + row * half, sin + row * half, d,
                                        a.rotary_dim, a.interleaved));
  }
}

}  // namespace

void LaunchRotaryEmbedding(const RotaryArgs& args, cudaStream_t stream) {
  const int64_t count = args.batch * args.seq * args.heads * args.head_size;
  if (count == 0) return;
  const bool known = DispatchFloat(args.dtype, [&](auto t_tag) {
    using T = decltype(t_tag);
    RotaryKernel<T><<<BlocksFor(count, kThreads), kThreads, 0, stream>>>(args, count);
  });
  if (!known) {
    throw sdk::Error(NXRT_STATUS_UNSUPPORTED,
                     "no CUDA RotaryEmbedding kernel for " + DtypeName(args.dtype));
  }
  CheckLaunch("RotaryEmbedding kernel launch");
}

}  // namespace nxrt::cuda
