// The layout of a convolution node at one input shape: batch, channels,
// output maps, groups and the window, resolved from X's and W's dims and
// the node's attributes, checked as the ONNX Conv family requires.
#pragma once

#include <string>

#include "nxrt/ep_sdk.hpp"
#include "tensor.hpp"
#include "window_geometry.hpp"

namespace nxrt::cpu {

struct ConvLayout {
  int64_t batch = 0;
  int64_t channels = 0;
  int64_t maps = 0;
  int64_t group = 1;
  WindowGeometry geometry;
  Dims out_dims;  // [batch, maps, spatial out...]
};

// Throws the EP's invalid-model error, naming `op`, when X and W do not form
// a convolution.
ConvLayout ResolveConvLayout(const sdk::Node& node, const Dims& x, const Dims& w,
                             const std::string& op);

}  // namespace nxrt::cpu
