// The product of a 1x1 convolution (stride 1, no pads, one group), planned
// once for every image size: per image,
//   Y[maps, pixels] = act(W[maps, channels] X[channels, pixels] + bias)
// on NCHW as it is, with pixels a runtime extent of oneDNN's matmul. A
// convolution primitive would be planned (and its code generated) again for
// each new image size, and would reorder X and Y to and from channel
// blocks around every call. The product runs bare, and one pass of oneDNN's
// binary add then puts the bias along each map with the activation as its
// post-op: the GEMM-based matmul takes a bias only along pixels, and runs its
// own post-ops as slow passes of their own (96 maps of 112x112 with Swish:
// 978 us through them, 560 us this way). That pass has fixed extents, so it
// is planned again, a small kernel, for each new image size.
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

  // Whether Y takes a pass after the product: a bias or an activation.
  bool Finishes() const { return shape_.bias || !shape_.activation.none(); }
  // That pass over Y [maps, pixels], in place; nullopt when oneDNN has only
  // its reference kernel for it.
  std::optional<PrimitiveRunner> PlanFinish(int64_t pixels) const;

  PointwiseShape shape_;
  PrimitiveRunner product_;
  PrimitiveRunner finish_;  // when Finishes(), planned at pixels_
  int64_t pixels_ = -1;     // the extent product_ and finish_ are bound at
};

}  // namespace nxrt::cpu::onednn
