// A float Conv whose kernel is 1x1 with stride 1, no pads and one group: a
// matrix product per image (onednn/float_pointwise_product.hpp), planned
// once for the node and serving every batch and image size at its rank, so
// a model fed images of ever new sizes plans it once. A size that repeats is
// also planned on oneDNN's convolution, which takes the bias and activation
// inside its kernel instead of in a pass of their own, and kept where it
// runs faster (ops/repeated_shape_plan.hpp).
#pragma once

#include <memory>
#include <span>

#include "cpu_kernel.hpp"
#include "onednn/post_activation.hpp"

namespace nxrt::cpu {

// The kernel for `node` (a Conv, or a FusedConv applying `activation`) at
// `inputs`, or null when it is not such a convolution of float tensors.
std::unique_ptr<CpuKernel> MakePointwiseConv(const sdk::Node& node,
                                             std::span<const nxrt_shape> inputs,
                                             const onednn::PostActivation& activation);

}  // namespace nxrt::cpu
