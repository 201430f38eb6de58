// Host-callable launchers of the device kernels beside cuDNN for the NCHW
// ops: the explicit padding of a window cuDNN cannot pad itself, and
// BatchNormalization at inference. Each enqueues on the given stream and
// returns at once (no host sync, no allocation), so it may be recorded into a
// CUDA graph. Arithmetic is float for float16 and bfloat16.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "nxrt/ep_abi.h"
#include "window_geometry.hpp"

namespace nxrt::cuda {

// `planes` row-major in_h x in_w planes copied into out_h x out_w planes,
// shifted down by pad_h rows and right by pad_w columns; every position with
// no input element gets the fill value. Output extents smaller than
// pad + input cut the input's tail.
struct PadGeometry {
  int64_t planes = 0;
  int64_t in_h = 0;
  int64_t in_w = 0;
  int64_t out_h = 0;
  int64_t out_w = 0;
  int64_t pad_h = 0;
  int64_t pad_w = 0;
};

void LaunchPadPlanes(nxrt_dtype dtype, const void* in, void* out, const PadGeometry& geometry,
                     float fill, cudaStream_t stream);

// The copy of `planes` planes that gives windows over axes `h` and `w` their
// pads, for cuDNN to run on unpadded.
inline PadGeometry PaddingOf(int64_t planes, const WindowAxis& h, const WindowAxis& w) {
  return {.planes = planes,
          .in_h = h.in,
          .in_w = w.in,
          .out_h = h.PaddedIn(),
          .out_w = w.PaddedIn(),
          .pad_h = h.pad_begin,
          .pad_w = w.pad_begin};
}

// y = x * s + (bias - mean * s) with s = scale / sqrt(var + epsilon), per
// channel of x viewed as [batch, channels, plane] (`count` elements). The
// four parameter vectors have `param_dtype`: x's dtype or float32.
void LaunchBatchNormInference(nxrt_dtype dtype, nxrt_dtype param_dtype, const void* x,
                              const void* scale, const void* bias, const void* mean,
                              const void* var, void* y, int64_t count, int64_t channels,
                              int64_t plane, float epsilon, cudaStream_t stream);

}  // namespace nxrt::cuda
