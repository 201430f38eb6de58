// The sliding window of Conv and the pooling ops along each spatial axis,
// resolved from the ONNX attributes (auto_pad, explicit pads ordered
// [x1_begin, x2_begin, ..., x1_end, x2_end, ...], strides, dilations, ceil
// mode) at concrete shapes, with the same output extents as the CPU EP.
// cuDNN pads both ends of an axis alike and has no ceil mode, so each axis
// also says whether cuDNN expresses it directly; when one does not, the
// kernel runs cuDNN unpadded on an explicitly padded copy of the input.
// Needs no CUDA, so it is tested on machines without a device.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nxrt/ep_sdk.hpp"

namespace nxrt::cuda {

struct WindowAttributes {
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> kernel_shape;  // empty for Conv: the weights give it
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;
  bool ceil_mode = false;

  static WindowAttributes Read(const sdk::Node& node);
};

struct WindowAxis {
  int64_t in = 1;
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t dilation = 1;
  int64_t pad_begin = 0;
  int64_t pad_end = 0;
  int64_t out = 1;

  // The input positions one window spans.
  int64_t Extent() const { return (kernel - 1) * dilation + 1; }
  // Whether cuDNN, padding pad_begin at both ends, slides exactly these windows.
  bool CudnnExpresses() const;
  // The extent of a padded copy holding every position the windows read:
  // pad_begin fill values, the input, then fill up to the last window's end
  // (or the input cut short where no window reaches its tail).
  int64_t PaddedIn() const { return (out - 1) * stride + Extent(); }
};

// One axis per entry of `in` (the spatial extents) and `kernel`. Attributes
// that do not fit the shapes throw INVALID_ARGUMENT naming `op`.
std::vector<WindowAxis> ResolveWindow(const WindowAttributes& attributes,
                                      std::span<const int64_t> in, std::span<const int64_t> kernel,
                                      const std::string& op);

// Why cuDNN cannot average over these windows as ONNX does, if so. cuDNN
// divides by the whole window (count_include_pad=1) or by the input
// positions in it (0); ONNX counts pads but not positions past them, which a
// ceil_mode window may reach, and a padded copy of the input would make pads
// count as input.
std::optional<std::string> AverageWindowProblem(std::span<const WindowAxis> axes,
                                                bool count_include_pad);

}  // namespace nxrt::cuda
