// The spatial geometry shared by Conv and the pooling ops: per spatial axis
// the kernel extent, stride, dilation and begin/end pads, resolved from the
// attributes (auto_pad SAME_UPPER/SAME_LOWER/VALID or explicit pads, ceil
// mode), and the output extent they give.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nxrt/ep_sdk.hpp"
#include "tensor.hpp"

namespace nxrt::cpu {

struct WindowAttributes {
  std::string auto_pad = "NOTSET";
  Dims kernel_shape;  // empty: from the weights (Conv)
  Dims strides;
  Dims dilations;
  Dims pads;
  bool ceil_mode = false;

  // The attributes named with `prefix` ("pool_" for a pool fused into a
  // convolution's node) before each ONNX name.
  static WindowAttributes Read(const sdk::Node& node, const std::string& prefix = "");
};

struct WindowGeometry {
  Dims in;  // spatial input extents
  Dims kernel;
  Dims strides;
  Dims dilations;
  Dims pad_begin;
  Dims pad_end;
  Dims out;  // spatial output extents
};

// The kernel offsets k in [first, last) of [0, kernel) whose position
// start + k * dilation lies in [lo, hi): the positions of one window that
// fall inside an extent, found without walking the window (a SAME-padded
// window may be far wider than the image it pools).
struct OffsetRange {
  int64_t first = 0, last = 0;
  int64_t count() const { return last - first; }
};
OffsetRange OffsetsWithin(int64_t start, int64_t dilation, int64_t kernel, int64_t lo, int64_t hi);

// Throws unless the attributes fit `kernel`'s spatial rank and the
// specification: positive kernel extents, strides and dilations, pads not
// negative, and a dilated extent within 64 bits.
void CheckWindowAttributes(const WindowAttributes& attributes, const Dims& kernel,
                           const std::string& op);

// `in` are the spatial extents, `kernel` the kernel extents; checks the
// attributes first.
WindowGeometry ResolveWindow(const WindowAttributes& attributes, const Dims& in, const Dims& kernel,
                             const std::string& op);

}  // namespace nxrt::cpu
