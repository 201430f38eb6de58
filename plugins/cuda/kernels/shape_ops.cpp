// Shape: the output is the input's extents (between start and end from
// opset 15), all known when the kernel is made at a concrete shape. They are
// uploaded once into a device buffer the kernel owns, so compute is one
// device-to-device copy on the EP's stream: no host memory is read and
// consumers on the device find the values there.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "kernels/cuda_kernel.hpp"
#include "kernels/cudnn_handles.hpp"
#include "kernels/kernel_factory.hpp"
#include "kernels/node_values.hpp"

namespace nxrt::cuda {
namespace {

class ShapeKernel : public CudaKernel {
 public:
  ShapeKernel(const DeviceContext& context, const sdk::Node& node, const nxrt_shape& input)
      : CudaKernel(context), label_(NodeLabel(node)), in_dims_(DimsOf(input)) {
    const int64_t rank = static_cast<int64_t>(in_dims_.size());
    // Out-of-range start and end clamp to the rank, as ONNX specifies.
    const auto clamp = [rank](int64_t v) {
      return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank);
    };
    const int64_t first = clamp(node.AttrInt("start", 0));
    const int64_t last = std::max(first, clamp(node.AttrInt("end", rank)));
    const std::vector<int64_t> values(in_dims_.begin() + first, in_dims_.begin() + last);
    out_dims_ = {last - first};
    bytes_ = values.size() * sizeof(int64_t);
    values_ = std::make_unique<DeviceBuffer>(bytes_);
    if (bytes_ != 0) {
      CheckCuda(
          cudaMemcpyAsync(values_->get(), values.data(), bytes_, cudaMemcpyHostToDevice, stream()),
          "cudaMemcpyAsync(shape values)");
      // `values` dies with this constructor.
      CheckCuda(cudaStreamSynchronize(stream()), "cudaStreamSynchronize(shape values)");
    }
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    // The values were fixed at creation; another shape needs another kernel.
    if (DimsOf(inputs[0].tensor) != in_dims_) {
      throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT,
                       label_ + ": the kernel was made for another input shape");
    }
    nxrt_tensor& out = Output(ctx, outputs, 0, NXRT_DTYPE_INT64, out_dims_);
    if (bytes_ != 0) {
      CheckCuda(
          cudaMemcpyAsync(out.data, values_->get(), bytes_, cudaMemcpyDeviceToDevice, stream()),
          "cudaMemcpyAsync(shape)");
    }
  }
  bool CaptureSafe() const override { return true; }

 private:
  std::string label_;
  std::vector<int64_t> in_dims_;
  std::vector<int64_t> out_dims_;
  size_t bytes_ = 0;
  std::unique_ptr<DeviceBuffer> values_;
};

}  // namespace

std::unique_ptr<sdk::Kernel> MakeShapeKernel(const DeviceContext& context, const sdk::Node& node,
                                             std::span<const nxrt_shape> inputs, int64_t) {
  if (node.op_type() != "Shape") return nullptr;
  return std::make_unique<ShapeKernel>(context, node, inputs[0]);
}

}  // namespace nxrt::cuda
