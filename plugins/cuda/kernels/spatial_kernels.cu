// The padding copy and the inference BatchNormalization of
// spatial_launch.hpp: one thread per output element, grid-stride.
#include <cuda_runtime.h>

#include <string>

#include "cuda_check.hpp"
#include "dtype.hpp"
#include "kernels/device_math.cuh"
#include "kernels/spatial_launch.hpp"

namespace nxrt::cuda {
namespace {

constexpr unsigned kThreads = 256;

template <typename T>
__global__ void PadPlanesKernel(const T* in, T* out, PadGeometry g, float fill, int64_t count) {
  const T fill_value = FromFloat<T>(fill);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t w = i % g.out_w;
    const int64_t h = (i / g.out_w) % g.out_h;
    const int64_t plane = i / (g.out_w * g.out_h);
    const int64_t in_h = h - g.pad_h;
    const int64_t in_w = w - g.pad_w;
    const bool inside = in_h >= 0 && in_h < g.in_h && in_w >= 0 && in_w < g.in_w;
    out[i] = inside ? in[(plane * g.in_h + in_h) * g.in_w + in_w] : fill_value;
  }
}

// The per-channel affine is recomputed per element: four cached loads are
// cheaper than a separate pass to fold them.
template <typename T, typename P>
__global__ void BatchNormKernel(const T* x, const P* scale, const P* bias, const P* mean,
                                const P* var, T* y, int64_t count, int64_t channels, int64_t plane,
                                float epsilon) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t c = (i / plane) % channels;
    const float s = ToFloat(scale[c]) / sqrtf(ToFloat(var[c]) + epsilon);
    const float shift = ToFloat(bias[c]) - ToFloat(mean[c]) * s;
    y[i] = FromFloat<T>(ToFloat(x[i]) * s + shift);
  }
}

[[noreturn]] void RefuseDtype(const char* what, nxrt_dtype dtype) {
  throw sdk::Error(NXRT_STATUS_UNSUPPORTED,
                   std::string("no CUDA ") + what + " kernel for " + DtypeName(dtype));
}

}  // namespace

void LaunchPadPlanes(nxrt_dtype dtype, const void* in, void* out, const PadGeometry& geometry,
                     float fill, cudaStream_t stream) {
  const int64_t count = geometry.planes * geometry.out_h * geometry.out_w;
  if (count == 0) return;
  const bool known = DispatchFloat(dtype, [&](auto tag) {
    using T = decltype(tag);
    PadPlanesKernel<T><<<BlocksFor(count, kThreads), kThreads, 0, stream>>>(
        static_cast<const T*>(in), static_cast<T*>(out), geometry, fill, count);
  });
  if (!known) RefuseDtype("padding", dtype);
  CheckLaunch("padding kernel launch");
}

void LaunchBatchNormInference(nxrt_dtype dtype, nxrt_dtype param_dtype, const void* x,
                              const void* scale, const void* bias, const void* mean,
                              const void* var, void* y, int64_t count, int64_t channels,
                              int64_t plane, float epsilon, cudaStream_t stream) {
  if (count == 0) return;
  if (param_dtype != dtype && param_dtype != NXRT_DTYPE_FLOAT32) {
    RefuseDtype("BatchNormalization parameter", param_dtype);
  }
  const bool known = DispatchFloat(dtype, [&](auto tag) {
    using T = decltype(tag);
    auto launch = [&](auto param_tag) {
      using P = decltype(param_tag);
      BatchNormKernel<T, P><<<BlocksFor(count, kThreads), kThreads, 0, stream>>>(
          static_cast<const T*>(x), static_cast<const P*>(scale), static_cast<const P*>(bias),
          static_cast<const P*>(mean), static_cast<const P*>(var), static_cast<T*>(y), count,
          channels, plane, epsilon);
    };
    if (param_dtype == dtype) {
      launch(T{});
    } else {
      launch(float{});
    }
  });
  if (!known) RefuseDtype("BatchNormalization", dtype);
  CheckLaunch("BatchNormalization kernel launch");
}

}  // namespace nxrt::cuda
