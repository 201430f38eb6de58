// Makes the CUDA kernel for a claimed node at concrete input shapes. Each op
// family file contributes one Make* function; shapes that a family cannot
// handle after all are refused with UNSUPPORTED naming the node.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "device_context.hpp"
#include "nxrt/ep_sdk.hpp"

namespace nxrt::cuda {

std::unique_ptr<sdk::Kernel> MakeCudaKernel(const DeviceContext& context, const sdk::Node& node,
                                            std::span<const nxrt_shape> inputs, int64_t opset);

// The op families; each returns nullptr for an op type it does not own.
std::unique_ptr<sdk::Kernel> MakeElementwiseKernel(const DeviceContext& context,
                                                   const sdk::Node& node,
                                                   std::span<const nxrt_shape> inputs,
                                                   int64_t opset);
std::unique_ptr<sdk::Kernel> MakeMatMulKernel(const DeviceContext& context, const sdk::Node& node,
                                              std::span<const nxrt_shape> inputs, int64_t opset);
std::unique_ptr<sdk::Kernel> MakeRowKernel(const DeviceContext& context, const sdk::Node& node,
                                           std::span<const nxrt_shape> inputs, int64_t opset);
std::unique_ptr<sdk::Kernel> MakeMovementKernel(const DeviceContext& context, const sdk::Node& node,
                                                std::span<const nxrt_shape> inputs, int64_t opset);
// Split (split_ops.cpp) and Shape (shape_ops.cpp).
std::unique_ptr<sdk::Kernel> MakeSplitKernel(const DeviceContext& context, const sdk::Node& node,
                                             std::span<const nxrt_shape> inputs, int64_t opset);
std::unique_ptr<sdk::Kernel> MakeShapeKernel(const DeviceContext& context, const sdk::Node& node,
                                             std::span<const nxrt_shape> inputs, int64_t opset);
// ReduceSum over int32 and int64 (integer_reduce_ops.cpp); asked before the
// row kernels, which sum floats.
std::unique_ptr<sdk::Kernel> MakeIntegerReduceKernel(const DeviceContext& context,
                                                     const sdk::Node& node,
                                                     std::span<const nxrt_shape> inputs,
                                                     int64_t opset);
// RotaryEmbedding of both domains (rotary_ops.cpp).
std::unique_ptr<sdk::Kernel> MakeRotaryKernel(const DeviceContext& context, const sdk::Node& node,
                                              std::span<const nxrt_shape> inputs, int64_t opset);
// The default-domain Attention (sdpa_ops.cpp).
std::unique_ptr<sdk::Kernel> MakeSdpaKernel(const DeviceContext& context, const sdk::Node& node,
                                            std::span<const nxrt_shape> inputs, int64_t opset);
// Conv, the pools and BatchNormalization over NCHW (conv_ops.cpp, pool_ops.cpp,
// batch_norm_ops.cpp).
std::unique_ptr<sdk::Kernel> MakeConvKernel(const DeviceContext& context, const sdk::Node& node,
                                            std::span<const nxrt_shape> inputs, int64_t opset);
std::unique_ptr<sdk::Kernel> MakePoolKernel(const DeviceContext& context, const sdk::Node& node,
                                            std::span<const nxrt_shape> inputs, int64_t opset);
std::unique_ptr<sdk::Kernel> MakeBatchNormKernel(const DeviceContext& context,
                                                 const sdk::Node& node,
                                                 std::span<const nxrt_shape> inputs, int64_t opset);

}  // namespace nxrt::cuda
