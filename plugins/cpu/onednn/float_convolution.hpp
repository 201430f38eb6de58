// A float convolution (1 to 3 spatial axes, groups, strides, dilations,
// uneven pads) planned once for its shape through oneDNN. oneDNN computes in
// channel-blocked layouts; the plan reorders X into one, computes (by
// Winograd for wide 3x3 stride-1 kernels), and reorders Y back to NCHW; a
// transposed convolution runs on oneDNN's deconvolution through the same
// reorders. (A 1x1 convolution is a product: float_pointwise_product.hpp.)
// The layouts are chosen so that oneDNN has an optimised kernel for them; a
// reference kernel is taken only when no layout has one, and
// implementation() says so. The weights are reordered on every call, or
// prepared once (PrepareWeights) when constant. The blocked copies of X and
// Y are the calling thread's (thread_workspace.hpp), so shape variants share
// their pages.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "post_activation.hpp"
#include "prepared_weights.hpp"
#include "primitive_runner.hpp"
#include "window_geometry.hpp"

namespace nxrt::cpu::onednn {

struct ConvolutionShape {
  int64_t batch = 0;
  int64_t channels = 0;
  int64_t maps = 0;
  int64_t group = 1;
  WindowGeometry geometry;
  bool bias = false;
  PostActivation activation{};  // applied to the result before it is stored
  // Y stays in 16-channel blocks in the plan's own buffer (blocked_output())
  // for a primitive that reads it there; needs a multiple of 16 maps.
  bool blocked_output = false;
};

// Whether oneDNN's implementation name (impl_info_str) is one of its
// reference kernels, which are plain loops.
bool IsReference(std::string_view implementation);

class FloatConvolution {
 public:
  // The plan for `shape`, or nullopt when oneDNN has none (more than three
  // spatial axes, say). Every extent must be positive.
  static std::optional<FloatConvolution> Plan(const ConvolutionShape& shape);
  // The plan of a transposed convolution (ConvTranspose) on oneDNN's
  // deconvolution, or nullopt when oneDNN has only its reference kernel for
  // it (or none, as for negative pads). `shape.geometry` is that of the
  // forward convolution it transposes, so geometry.out is X's spatial extent
  // and geometry.in Y's; W is [channels, maps / group, kernel...] as ONNX has
  // it; activation and blocked_output are not taken.
  static std::optional<FloatConvolution> PlanTransposed(const ConvolutionShape& shape);

  // W as given ([maps, channels / group, kernel...]) in the layout the plan takes.
  std::shared_ptr<PreparedWeights> PrepareWeights(const float* w) const;
  bool Takes(const PreparedWeights& w) const { return w.desc() == w_desc_; }

  // `prepared`: W prepared by PrepareWeights, or null to reorder `w` now.
  // `bias` is null when the shape has none; `y` is unused (null) for a
  // blocked output.
  void Run(const float* x, const float* w, const PreparedWeights* prepared, const float* bias,
           float* y);

  // Y of the last Run, for a plan with blocked_output.
  const dnnl::memory& blocked_output() const { return y_blocked_; }

  // oneDNN's name for the kernel the plan runs, e.g. "jit_dw:avx512_core".
  const std::string& implementation() const { return implementation_; }

 private:
  FloatConvolution() = default;

  struct PlannedDescs {
    dnnl::memory::desc src, weights, dst, bias, scratchpad;  // bias zero when absent
  };
  // Takes `primitive`, planned with `descs`, with the reorders its layouts
  // need between them and the plain X, W (laid out as `given_w`) and Y.
  void Install(dnnl::primitive primitive, const PlannedDescs& descs,
               const dnnl::memory::desc& given_w, const dnnl::memory::dims& x_dims,
               const dnnl::memory::dims& y_dims, bool keep_blocked, std::string implementation);

  std::string implementation_;
  dnnl::memory::desc given_w_desc_;
  dnnl::memory::desc w_desc_;
  // X and Y in the primitive's layouts, where they are not as given, live in
  // the thread's activations workspace during a call: X's bytes, then Y's.
  size_t x_blocked_bytes_ = 0;
  size_t y_blocked_bytes_ = 0;
  dnnl::memory w_prepared_;    // W reordered on each call, when not constant
  PrimitiveRunner w_reorder_;  // made with w_prepared_
  dnnl::memory y_blocked_;     // Y kept blocked for the next primitive, else empty
  PrimitiveRunner x_reorder_;
  PrimitiveRunner convolution_;
  PrimitiveRunner y_reorder_;
  bool reorder_x_ = false;
  bool reorder_y_ = false;     // Y comes back to NCHW through y_reorder_
  bool keep_blocked_ = false;  // Y stays in y_blocked_
};

}  // namespace nxrt::cpu::onednn
