#include "kernels/kernel_factory.hpp"

#include <string>

namespace nxrt::cuda {

// com.microsoft GroupQueryAttention (attention_ops.cpp); nullptr for any other op.
std::unique_ptr<sdk::Kernel> MakeAttentionKernel(const DeviceContext& context,
                                                 const sdk::Node& node,
                                                 std::span<const nxrt_shape> inputs, int64_t opset);

std::unique_ptr<sdk::Kernel> MakeCudaKernel(const DeviceContext& context, const sdk::Node& node,
                                            std::span<const nxrt_shape> inputs, int64_t opset) {
  for (auto make :
       {MakeElementwiseKernel, MakeMatMulKernel, MakeIntegerReduceKernel, MakeRowKernel,
        MakeMovementKernel, MakeSplitKernel, MakeShapeKernel, MakeAttentionKernel, MakeRotaryKernel,
        MakeSdpaKernel, MakeConvKernel, MakePoolKernel, MakeBatchNormKernel}) {
    if (auto kernel = make(context, node, inputs, opset)) return kernel;
  }
  throw sdk::Error(NXRT_STATUS_UNSUPPORTED, "node '" + std::string(node.name()) + "' (" +
                                                std::string(node.op_type()) +
                                                ") has no CUDA kernel");
}

}  // namespace nxrt::cuda
