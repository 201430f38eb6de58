// An 8-bit integer convolution (1 to 3 spatial axes, groups, strides,
// dilations, uneven pads) planned once for its shape through oneDNN:
//   acc = sum over the window of (X - x_zero) * W    (int32, exact)
// X uint8 or int8 NCHW, W int8 [maps, channels / group, kernel...], padding
// that reads as x_zero. The result is acc itself (int32, ConvInteger), or,
// requantised, round_half_even((acc + bias) * scale[map]) + y_zero saturated
// into uint8 or int8 (QLinearConv), bias int32 per map and scale one value
// or one per map. The zero points are run-time arguments, so one plan serves
// every value of them; oneDNN's kernels take the scales only when planned.
//
// oneDNN's integer kernels read channels-last or channel-blocked images;
// the plan brings X into its layout and Y back to NCHW through the calling
// thread's workspace (quantized/byte_transpose.hpp for channels-last), and reads W prepared once
// (PrepareWeights) when constant, else reordered on every call.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "float_convolution.hpp"
#include "nxrt/ep_abi.h"
#include "prepared_weights.hpp"
#include "primitive_runner.hpp"

namespace nxrt::cpu::onednn {

struct Int8ConvolutionShape {
  ConvolutionShape convolution;  // its activation and blocked_output are not taken
  nxrt_dtype x_dtype = NXRT_DTYPE_UINT8;
  // NXRT_DTYPE_INT32 for the sums, or the requantised NXRT_DTYPE_UINT8 or
  // NXRT_DTYPE_INT8.
  nxrt_dtype y_dtype = NXRT_DTYPE_INT32;
  std::vector<float> scales;  // a requantised result's: one, or one per map
};

class Int8Convolution {
 public:
  // How a call brings X or Y between NCHW and the plan's layout: as it is,
  // through TransposeBytes (an 8-bit image channels-last), or through a
  // oneDNN reorder.
  enum class Layout { kAsGiven, kChannelsLast, kReordered };

  // The plan for `shape`, or nullopt when oneDNN has only its reference
  // kernel for it, or none. Every extent must be positive.
  static std::optional<Int8Convolution> Plan(const Int8ConvolutionShape& shape);

  // W as given (int8) in the layout the plan takes.
  std::shared_ptr<PreparedWeights> PrepareWeights(const int8_t* w) const;
  bool Takes(const PreparedWeights& w) const { return w.desc() == w_desc_; }

  // `prepared`: W prepared by PrepareWeights, or null to reorder `w` now.
  // `bias` and `y_zero` are read for a requantised result only; `bias`
  // may be null. Allocates nothing once W's buffer exists.
  void Run(const void* x, int32_t x_zero, const int8_t* w, const PreparedWeights* prepared,
           const int32_t* bias, int32_t y_zero, void* y);

  const std::vector<float>& scales() const { return scales_; }

  // oneDNN's name for the kernel the plan runs.
  const std::string& implementation() const { return implementation_; }

 private:
  Int8Convolution() = default;

  std::string implementation_;
  bool requantised_ = false;
  std::vector<float> scales_;
  dnnl::memory::desc given_w_desc_;
  dnnl::memory::desc w_desc_;
  int64_t batch_ = 0, channels_ = 0, maps_ = 0;
  int64_t in_size_ = 0, out_size_ = 0;  // of an image's spatial extents
  size_t x_blocked_bytes_ = 0;          // X in the plan's layout, then Y, in the workspace
  size_t y_blocked_bytes_ = 0;
  Layout x_layout_ = Layout::kAsGiven;
  Layout y_layout_ = Layout::kAsGiven;
  dnnl::memory w_reordered_;   // W of a call that is not constant
  PrimitiveRunner w_reorder_;  // made with w_reordered_
  PrimitiveRunner x_reorder_;
  PrimitiveRunner convolution_;
  PrimitiveRunner y_reorder_;
  std::vector<int32_t> zero_bias_;  // the bias of a call that has none
};

}  // namespace nxrt::cpu::onednn
