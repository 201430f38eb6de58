// A float Conv along one axis (a 1-D convolution, or a 2-D one whose image
// and kernel span a single row or column): the window unrolled into columns
// (im2col), then the product of a pointwise convolution
// (onednn/float_pointwise_product.hpp), whose pixel count is a runtime
// extent. Planned once for the node, its kernel serves every length: oneDNN
// would plan and generate a convolution for each (2.7 ms for a 1x3 kernel
// over 960 channels, against 0.17 ms to run it), and a sequence model fed
// inputs of ever new lengths would pay that on every run. A length that
// repeats is planned on oneDNN after all (ops/repeated_shape_plan.hpp).
#pragma once

#include <memory>
#include <span>

#include "cpu_kernel.hpp"
#include "onednn/post_activation.hpp"

namespace nxrt::cpu {

// The kernel for `node` (a Conv, or a FusedConv applying `activation`) at
// `inputs`, or null when it is not a one-group float convolution along one
// axis with a kernel wider than 1.
std::unique_ptr<CpuKernel> MakeUnrolledConv(const sdk::Node& node,
                                            std::span<const nxrt_shape> inputs,
                                            const onednn::PostActivation& activation);

}  // namespace nxrt::cpu
