// The product of a 1x1 convolution (stride 1, no pads, one group), planned
// once for every image size: per image,
//   Y[maps, pixels] = act(W[maps, channels] X[channels, pixels] + bias)
// on NCHW as it is, with pixels a runtime extent of oneDNN's matmul. A
// convolution primitive would be planned (and its code generated) again for
// each new image size, and would reorder X and Y to and from channel
// blocks around every call. oneDNN's GEMM-based matmul adds a bias only along
// pixels, so the bias is written into Y first and the product summed onto it.
#pragma once

#include <cstdint>
#include <optional>

#include "post_activation.hpp"
#include "primitive_runner.hpp"

namespace nxrt::cpu::onednn {

struct PointwiseShape {
  int64_t maps = 0;
  int64_t channels = 0;
  bool bias = false;
  PostActivation activation{};  // applied before Y is stored
};

class FloatPointwiseProduct {
 public:
  // The plan, or nullopt when oneDNN has none but its reference kernel.
  // Maps and channels must be positive.
  static std::optional<FloatPointwiseProduct> Plan(const PointwiseShape& shape);

  const PointwiseShape& shape() const { return shape_; }

  // One image: `x` [channels, pixels], `w` [maps, channels], `bias` [maps]
  // (ignored when the shape has none), `y` [maps, pixels], all row-major.
  // Allocates only when `pixels` differs from the previous call's.
  void Run(const float* x, const float* w, const float* bias, float* y, int64_t pixels);

 private:
  explicit FloatPointwiseProduct(const PointwiseShape& shape) : shape_(shape) {}

  PointwiseShape shape_;
  PrimitiveRunner runner_;
  int64_t pixels_ = -1;  // the extent the runner's X and Y are bound at
};

}  // namespace nxrt::cpu::onednn
