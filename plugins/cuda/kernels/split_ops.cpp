// Split: each output is one strided copy of its slab of the input along the
// split axis. The sizes come from the attribute (before opset 13), from a
// constant `split` input (read when the host prepares constants), or, absent
// both, from equal parts: num_outputs (opset 18) or the output count, the
// last part smaller when the axis does not divide evenly.
#include <algorithm>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "kernels/cuda_kernel.hpp"
#include "kernels/kernel_factory.hpp"
#include "kernels/launchers.hpp"
#include "kernels/node_values.hpp"

namespace nxrt::cuda {
namespace {

class SplitKernel : public CudaKernel {
 public:
  SplitKernel(const DeviceContext& context, const sdk::Node& node,
              std::span<const nxrt_shape> inputs, int64_t opset)
      : CudaKernel(context),
        label_(NodeLabel(node)),
        dtype_(inputs[0].dtype),
        in_dims_(DimsOf(inputs[0])),
        parts_(static_cast<int64_t>(node.output_count())),
        num_outputs_(opset >= 18 ? node.AttrInt("num_outputs", 0) : 0) {
    const int64_t rank = static_cast<int64_t>(in_dims_.size());
    if (rank > kMaxDims) {
      throw sdk::Error(NXRT_STATUS_UNSUPPORTED,
                       label_ + ": rank above " + std::to_string(kMaxDims));
    }
    axis_ = NormalizeAxis(node.AttrInt("axis", 0), rank, label_);
    // From opset 13 the sizes are an input; a present one arrives as a constant.
    const bool sizes_input =
        opset >= 13 && inputs.size() > 1 && inputs[1].dtype != NXRT_DTYPE_UNDEFINED;
    if (!sizes_input) Plan(opset < 13 ? node.AttrInts("split") : std::vector<int64_t>{});
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
    if (parts_dims_.empty()) {
      throw sdk::Error(NXRT_STATUS_FAILED_PRECONDITION,
                       label_ + ": split sizes were not handed over as constants");
    }
    for (size_t i = 0; i < parts_dims_.size(); ++i) {
      nxrt_tensor& out = Output(ctx, outputs, i, dtype_, parts_dims_[i]);
      LaunchStridedCopy(ElementSize(dtype_), inputs[0].tensor.data, out.data, geometries_[i],
                        ElementCount(parts_dims_[i]), stream());
    }
  }
  bool CaptureSafe() const override { return true; }

 private:
  void Plan(std::vector<int64_t> sizes) {
    const int64_t extent = in_dims_[axis_];
    if (sizes.empty()) {
      const int64_t n = num_outputs_ > 0 ? num_outputs_ : parts_;
      if (n <= 0) throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT, label_ + ": no outputs");
      const int64_t chunk = (extent + n - 1) / n;
      for (int64_t i = 0; i < n; ++i) {
        sizes.push_back(std::max<int64_t>(0, std::min(chunk, extent - i * chunk)));
      }
    }
    if (static_cast<int64_t>(sizes.size()) != parts_) {
      throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT, label_ + ": " + std::to_string(sizes.size()) +
                                                         " sizes for " + std::to_string(parts_) +
                                                         " outputs");
    }
    int64_t total = 0;
    for (int64_t size : sizes) {
      if (size < 0) throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT, label_ + ": negative size");
      total += size;
    }
    if (total != extent) {
      throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT,
                       label_ + ": sizes add up to " + std::to_string(total) + ", the axis holds " +
                           std::to_string(extent));
    }
    const std::vector<int64_t> strides = RowMajorStrides(in_dims_);
    parts_dims_.clear();
    geometries_.clear();
    int64_t start = 0;
    for (int64_t size : sizes) {
      std::vector<int64_t> dims = in_dims_;
      dims[axis_] = size;
      CopyGeometry geometry;
      geometry.rank = static_cast<int>(dims.size());
      for (size_t d = 0; d < dims.size(); ++d) {
        geometry.dims[d] = dims[d];
        geometry.strides[d] = strides[d];
      }
      geometry.offset = start * strides[axis_];
      start += size;
      parts_dims_.push_back(std::move(dims));
      geometries_.push_back(geometry);
    }
  }

  std::string label_;
  nxrt_dtype dtype_;
  std::vector<int64_t> in_dims_;
  int64_t parts_;
  int64_t num_outputs_;
  int64_t axis_ = 0;
  std::vector<std::vector<int64_t>> parts_dims_;
  std::vector<CopyGeometry> geometries_;
};

}  // namespace

std::unique_ptr<sdk::Kernel> MakeSplitKernel(const DeviceContext& context, const sdk::Node& node,
                                             std::span<const nxrt_shape> inputs, int64_t opset) {
  if (node.op_type() != "Split") return nullptr;
  return std::make_unique<SplitKernel>(context, node, inputs, opset);
}

}  // namespace nxrt::cuda
