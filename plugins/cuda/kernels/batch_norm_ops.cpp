// BatchNormalization at inference: the given mean and variance normalise
// each channel of [N, C, ...]. One elementwise kernel rather than
// cudnnBatchNormalizationForwardInference: it takes every float type and
// parameters in x's type or float32 alike (cuDNN wants float parameters for
// float16 data), and needs no descriptors.
#include <string>

#include "dtype.hpp"
#include "kernels/cuda_kernel.hpp"
#include "kernels/kernel_factory.hpp"
#include "kernels/spatial_launch.hpp"

namespace nxrt::cuda {
namespace {

class BatchNormKernel : public CudaKernel {
 public:
  BatchNormKernel(const DeviceContext& context, const sdk::Node& node,
                  std::span<const nxrt_shape> inputs)
      : CudaKernel(context),
        dtype_(inputs[0].dtype),
        param_dtype_(inputs[1].dtype),
        dims_(DimsOf(inputs[0])),
        epsilon_(node.AttrFloat("epsilon", 1e-5f)) {
    auto refuse = [&](const std::string& why) {
      throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT,
                       "node '" + std::string(node.name()) + "' (BatchNormalization): " + why);
    };
    if (dims_.size() < 2) refuse("X needs N and C axes");
    if (inputs.size() < 5) refuse("scale, B, input_mean and input_var are required");
    channels_ = dims_[1];
    for (size_t i = 1; i < 5; ++i) {
      if (ElementCount(DimsOf(inputs[i])) != channels_) {
        refuse("input " + std::to_string(i) + " does not hold one value per channel");
      }
      if (inputs[i].dtype != param_dtype_) refuse("the parameters differ in type");
    }
    if (param_dtype_ != dtype_ && param_dtype_ != NXRT_DTYPE_FLOAT32) {
      throw sdk::Error(NXRT_STATUS_UNSUPPORTED, "node '" + std::string(node.name()) +
                                                    "' (BatchNormalization): parameters of " +
                                                    DtypeName(param_dtype_) + " with X of " +
                                                    DtypeName(dtype_));
    }
    plane_ = 1;
    for (size_t d = 2; d < dims_.size(); ++d) plane_ *= dims_[d];
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = Output(ctx, outputs, 0, dtype_, dims_);
    LaunchBatchNormInference(dtype_, param_dtype_, inputs[0].tensor.data, inputs[1].tensor.data,
                             inputs[2].tensor.data, inputs[3].tensor.data, inputs[4].tensor.data,
                             out.data, ElementCount(dims_), channels_, plane_, epsilon_, stream());
  }
  bool CaptureSafe() const override { return true; }

 private:
  nxrt_dtype dtype_;
  nxrt_dtype param_dtype_;
  std::vector<int64_t> dims_;
  float epsilon_;
  int64_t channels_ = 0;
  int64_t plane_ = 1;
};

}  // namespace

std::unique_ptr<sdk::Kernel> MakeBatchNormKernel(const DeviceContext& context,
                                                 const sdk::Node& node,
                                                 std::span<const nxrt_shape> inputs, int64_t) {
  if (node.op_type() != "BatchNormalization") return nullptr;
  return std::make_unique<BatchNormKernel>(context, node, inputs);
}

}  // namespace nxrt::cuda
