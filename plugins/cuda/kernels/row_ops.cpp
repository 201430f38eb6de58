// Softmax, layer/RMS normalisation and last-axis reductions: each views its
// input as [rows, last axis] and launches one row kernel.
#include <string>

#include "dtype.hpp"
#include "kernels/cuda_kernel.hpp"
#include "kernels/kernel_factory.hpp"
#include "kernels/launchers.hpp"

namespace nxrt::cuda {
namespace {

struct Rows {
  int64_t rows = 0;
  int64_t cols = 0;
};

Rows RowsOf(const std::vector<int64_t>& dims) {
  if (dims.empty()) return {1, 1};
  const int64_t cols = dims.back();
  return {cols == 0 ? 0 : ElementCount(dims) / cols, cols};
}

class SoftmaxKernel : public CudaKernel {
 public:
  SoftmaxKernel(const DeviceContext& context, const nxrt_shape& input)
      : CudaKernel(context), dtype_(input.dtype), dims_(DimsOf(input)) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = Output(ctx, outputs, 0, dtype_, dims_);
    const Rows rows = RowsOf(dims_);
    LaunchSoftmax(dtype_, inputs[0].tensor.data, out.data, rows.rows, rows.cols, stream());
  }
  bool CaptureSafe() const override { return true; }

 private:
  nxrt_dtype dtype_;
  std::vector<int64_t> dims_;
};

class NormalizationKernel : public CudaKernel {
 public:
  NormalizationKernel(const DeviceContext& context, const sdk::Node& node,
                      std::span<const nxrt_shape> inputs, bool rms)
      : CudaKernel(context),
        dtype_(inputs[0].dtype),
        dims_(DimsOf(inputs[0])),
        epsilon_(node.AttrFloat("epsilon", 1e-5f)),
        rms_(rms) {
    const int64_t cols = RowsOf(dims_).cols;
    for (size_t i = 1; i < inputs.size() && i < 3; ++i) {
      if (inputs[i].dtype == NXRT_DTYPE_UNDEFINED) continue;
      if (ElementCount(DimsOf(inputs[i])) != cols) {
        throw sdk::Error(NXRT_STATUS_UNSUPPORTED,
                         "node '" + std::string(node.name()) + "': input " + std::to_string(i) +
                             " does not match the last axis (" + std::to_string(cols) + ")");
      }
    }
    has_bias_ = !rms && inputs.size() > 2 && inputs[2].dtype != NXRT_DTYPE_UNDEFINED;
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = Output(ctx, outputs, 0, dtype_, dims_);
    const Rows rows = RowsOf(dims_);
    LaunchNormalization(dtype_, inputs[0].tensor.data, inputs[1].tensor.data,
                        has_bias_ ? inputs[2].tensor.data : nullptr, out.data, rows.rows, rows.cols,
                        epsilon_, rms_, stream());
  }
  bool CaptureSafe() const override { return true; }

 private:
  nxrt_dtype dtype_;
  std::vector<int64_t> dims_;
  float epsilon_;
  bool rms_;
  bool has_bias_ = false;
};

class ReduceLastAxisKernel : public CudaKernel {
 public:
  ReduceLastAxisKernel(const DeviceContext& context, const sdk::Node& node, const nxrt_shape& input,
                       bool mean)
      : CudaKernel(context), dtype_(input.dtype), in_dims_(DimsOf(input)), mean_(mean) {
    out_dims_ = in_dims_;
    if (node.AttrInt("keepdims", 1) != 0) {
      out_dims_.back() = 1;
    } else {
      out_dims_.pop_back();
    }
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = Output(ctx, outputs, 0, dtype_, out_dims_);
    const int64_t cols = in_dims_.back();
    LaunchReduceLastAxis(dtype_, inputs[0].tensor.data, out.data, ElementCount(out_dims_), cols,
                         mean_, stream());
  }
  bool CaptureSafe() const override { return true; }

 private:
  nxrt_dtype dtype_;
  std::vector<int64_t> in_dims_;
  std::vector<int64_t> out_dims_;
  bool mean_;
};

}  // namespace

std::unique_ptr<sdk::Kernel> MakeRowKernel(const DeviceContext& context, const sdk::Node& node,
                                           std::span<const nxrt_shape> inputs, int64_t) {
  const std::string_view op = node.op_type();
  if (op == "Softmax") return std::make_unique<SoftmaxKernel>(context, inputs[0]);
  if (op == "LayerNormalization") {
    return std::make_unique<NormalizationKernel>(context, node, inputs, false);
  }
  if (op == "SimplifiedLayerNormalization" || op == "RMSNormalization") {
    return std::make_unique<NormalizationKernel>(context, node, inputs, true);
  }
  if (op == "ReduceMean" || op == "ReduceSum") {
    if (inputs[0].rank == 0) {
      throw sdk::Error(NXRT_STATUS_UNSUPPORTED, "node '" + std::string(node.name()) +
                                                    "': a scalar has no last axis to reduce");
    }
    return std::make_unique<ReduceLastAxisKernel>(context, node, inputs[0], op == "ReduceMean");
  }
  return nullptr;
}

}  // namespace nxrt::cuda
