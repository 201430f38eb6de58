// ReduceSum over int32 and int64, over any axes: from the attribute (before
// opset 13), from a constant `axes` input (read when the host prepares
// constants), or, absent both, every axis unless noop_with_empty_axes asks
// for the input unchanged. Float sums stay with the row kernels.
#include <string>
#include <vector>

#include "dtype.hpp"
#include "kernels/cuda_kernel.hpp"
#include "kernels/integer_reduce_launch.hpp"
#include "kernels/kernel_factory.hpp"
#include "kernels/node_values.hpp"

namespace nxrt::cuda {
namespace {

class IntegerReduceSumKernel : public CudaKernel {
 public:
  IntegerReduceSumKernel(const DeviceContext& context, const sdk::Node& node,
                         std::span<const nxrt_shape> inputs, int64_t opset)
      : CudaKernel(context),
        label_(NodeLabel(node)),
        dtype_(inputs[0].dtype),
        in_dims_(DimsOf(inputs[0])),
        keepdims_(node.AttrInt("keepdims", 1) != 0),
        noop_with_empty_axes_(node.AttrInt("noop_with_empty_axes", 0) != 0) {
    if (in_dims_.size() > static_cast<size_t>(kMaxDims)) {
      throw sdk::Error(NXRT_STATUS_UNSUPPORTED,
                       label_ + ": rank above " + std::to_string(kMaxDims));
    }
    const bool axes_input =
        opset >= 13 && inputs.size() > 1 && inputs[1].dtype != NXRT_DTYPE_UNDEFINED;
    if (!axes_input) Plan(opset < 13 ? node.AttrInts("axes") : std::vector<int64_t>{});
  }

  void PrepareConstantInputs(std::span<const nxrt_constant_input> constants) override {
    for (const nxrt_constant_input& constant : constants) {
      if (constant.input_index == 1) {
        Plan(ReadIntegers(constant.dtype, constant.bytes, constant.byte_size));
      }
    }
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    if (!planned_) {
      throw sdk::Error(NXRT_STATUS_FAILED_PRECONDITION,
                       label_ + ": axes were not handed over as constants");
    }
    nxrt_tensor& out = Output(ctx, outputs, 0, dtype_, out_dims_);
    LaunchIntegerReduceSum(dtype_, inputs[0].tensor.data, out.data, geometry_,
                           ElementCount(out_dims_), stream());
  }
  bool CaptureSafe() const override { return true; }

 private:
  void Plan(const std::vector<int64_t>& axes) {
    const int64_t rank = static_cast<int64_t>(in_dims_.size());
    std::vector<bool> reduced(in_dims_.size(), axes.empty() && !noop_with_empty_axes_);
    for (int64_t axis : axes) reduced[NormalizeAxis(axis, rank, label_)] = true;
    const std::vector<int64_t> strides = RowMajorStrides(in_dims_);
    geometry_ = ReduceGeometry{};
    out_dims_.clear();
    for (size_t d = 0; d < in_dims_.size(); ++d) {
      if (reduced[d]) {
        geometry_.reduced_dims[geometry_.reduced_rank] = in_dims_[d];
        geometry_.reduced_strides[geometry_.reduced_rank++] = strides[d];
        geometry_.reduced_count *= in_dims_[d];
        if (keepdims_) out_dims_.push_back(1);
      } else {
        geometry_.kept_dims[geometry_.kept_rank] = in_dims_[d];
        geometry_.kept_strides[geometry_.kept_rank++] = strides[d];
        out_dims_.push_back(in_dims_[d]);
      }
    }
    planned_ = true;
  }

  std::string label_;
  nxrt_dtype dtype_;
  std::vector<int64_t> in_dims_;
  bool keepdims_;
  bool noop_with_empty_axes_;
  std::vector<int64_t> out_dims_;
  ReduceGeometry geometry_;
  bool planned_ = false;
};

}  // namespace

std::unique_ptr<sdk::Kernel> MakeIntegerReduceKernel(const DeviceContext& context,
                                                     const sdk::Node& node,
                                                     std::span<const nxrt_shape> inputs,
                                                     int64_t opset) {
  const bool integer = inputs[0].dtype == NXRT_DTYPE_INT32 || inputs[0].dtype == NXRT_DTYPE_INT64;
  if (node.op_type() != "ReduceSum" || !integer) return nullptr;
  return std::make_unique<IntegerReduceSumKernel>(context, node, inputs, opset);
}

}  // namespace nxrt::cuda
