// The dims oneDNN describes a convolution's window and tensors by, taken
// from the EP's WindowGeometry: oneDNN counts a dilation by its gaps (ONNX
// by its step), and takes an image's dims as batch and channels followed by
// the spatial extents.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include "tensor.hpp"
#include "window_geometry.hpp"

namespace nxrt::cpu::onednn {

struct WindowDims {
  dnnl::memory::dims strides, dilations, pad_begin, pad_end;
};

inline WindowDims WindowDimsOf(const WindowGeometry& g) {
  WindowDims dims{{g.strides.begin(), g.strides.end()},
                  {},
                  {g.pad_begin.begin(), g.pad_begin.end()},
                  {g.pad_end.begin(), g.pad_end.end()}};
  for (int64_t d : g.dilations) dims.dilations.push_back(d - 1);
  return dims;
}

// `head` followed by `spatial`.
inline dnnl::memory::dims WithSpatial(dnnl::memory::dims head, const Dims& spatial) {
  head.insert(head.end(), spatial.begin(), spatial.end());
  return head;
}

}  // namespace nxrt::cpu::onednn
