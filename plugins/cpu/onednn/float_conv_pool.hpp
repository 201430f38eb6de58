// A float convolution (with its Relu, when fused) and the max pooling of its
// result, planned once for their shapes. The pooling reads the convolution's
// 16-channel blocks where oneDNN left them, so only the pooled tensor, a
// fraction of the size, is reordered back to NCHW: on the benchmark CNN that
// saves the reorder of the full convolution output and a pass of NCHW
// pooling over it.
#pragma once

#include <optional>

#include "float_convolution.hpp"
#include "primitive_runner.hpp"
#include "window_geometry.hpp"

namespace nxrt::cpu::onednn {

class FloatConvPool {
 public:
  // The plan for `convolution` (maps a multiple of 16) followed by max
  // pooling over `pool`, whose input extents are the convolution's output
  // extents; nullopt when oneDNN has none.
  static std::optional<FloatConvPool> Plan(ConvolutionShape convolution,
                                           const WindowGeometry& pool);

  // Weights are the convolution's: prepared, shared and adopted through it.
  FloatConvolution& convolution() { return convolution_; }
  const FloatConvolution& convolution() const { return convolution_; }

  // As FloatConvolution::Run; `y` receives the pooled tensor in NCHW.
  void Run(const float* x, const float* w, const PreparedWeights* prepared, const float* bias,
           float* y);

 private:
  explicit FloatConvPool(FloatConvolution convolution) : convolution_(std::move(convolution)) {}

  FloatConvolution convolution_;
  dnnl::memory pooled_;  // the pooled tensor, still in blocks
  PrimitiveRunner pool_;
  PrimitiveRunner reorder_;
};

}  // namespace nxrt::cpu::onednn
