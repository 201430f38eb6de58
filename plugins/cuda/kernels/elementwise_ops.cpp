// Unary and broadcasting binary arithmetic and Cast: the geometry is worked
// out once per shape when the kernel is made, so compute only launches.
#include <algorithm>
#include <map>
#include <string>

#include "dtype.hpp"
#include "kernels/cuda_kernel.hpp"
#include "kernels/kernel_factory.hpp"
#include "kernels/launchers.hpp"

namespace nxrt::cuda {
namespace {

class UnaryKernel : public CudaKernel {
 public:
  UnaryKernel(const DeviceContext& context, UnaryOp op, const nxrt_shape& input)
      : CudaKernel(context), op_(op), dtype_(input.dtype), dims_(DimsOf(input)) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = Output(ctx, outputs, 0, dtype_, dims_);
    LaunchUnary(op_, dtype_, inputs[0].tensor.data, out.data, ElementCount(dims_), stream());
  }
  bool CaptureSafe() const override { return true; }

 private:
  UnaryOp op_;
  nxrt_dtype dtype_;
  std::vector<int64_t> dims_;
};

// Row-major element strides of `dims`.
std::vector<int64_t> StridesOf(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

class BinaryKernel : public CudaKernel {
 public:
  BinaryKernel(const DeviceContext& context, const sdk::Node& node, BinaryOp op,
               const nxrt_shape& a, const nxrt_shape& b)
      : CudaKernel(context), op_(op), dtype_(a.dtype) {
    const std::vector<int64_t> a_dims = DimsOf(a);
    const std::vector<int64_t> b_dims = DimsOf(b);
    const size_t rank = std::max(a_dims.size(), b_dims.size());
    if (rank > static_cast<size_t>(kMaxDims)) {
      throw sdk::Error(NXRT_STATUS_UNSUPPORTED,
                       "rank " + std::to_string(rank) + " exceeds the CUDA broadcast limit");
    }
    // Align both shapes on the right, as numpy broadcasting does.
    std::vector<int64_t> a_full(rank, 1), b_full(rank, 1);
    std::copy(a_dims.begin(), a_dims.end(), a_full.begin() + (rank - a_dims.size()));
    std::copy(b_dims.begin(), b_dims.end(), b_full.begin() + (rank - b_dims.size()));
    const std::vector<int64_t> a_strides = StridesOf(a_full);
    const std::vector<int64_t> b_strides = StridesOf(b_full);
    geometry_.rank = static_cast<int>(rank);
    for (size_t d = 0; d < rank; ++d) {
      if (a_full[d] != b_full[d] && a_full[d] != 1 && b_full[d] != 1) {
        throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT, "node '" + std::string(node.name()) +
                                                           "': shapes do not broadcast on axis " +
                                                           std::to_string(d));
      }
      const int64_t extent = a_full[d] == 1 ? b_full[d] : a_full[d];
      dims_.push_back(extent);
      geometry_.dims[d] = extent;
      geometry_.a_strides[d] = a_full[d] == 1 ? 0 : a_strides[d];
      geometry_.b_strides[d] = b_full[d] == 1 ? 0 : b_strides[d];
    }
    geometry_.same_shape = a_full == b_full;
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = Output(ctx, outputs, 0, dtype_, dims_);
    LaunchBinary(op_, dtype_, inputs[0].tensor.data, inputs[1].tensor.data, out.data, geometry_,
                 ElementCount(dims_), stream());
  }
  bool CaptureSafe() const override { return true; }

 private:
  BinaryOp op_;
  nxrt_dtype dtype_;
  BinaryGeometry geometry_;
  std::vector<int64_t> dims_;
};

class CastKernel : public CudaKernel {
 public:
  CastKernel(const DeviceContext& context, const nxrt_shape& input, nxrt_dtype to)
      : CudaKernel(context), from_(input.dtype), to_(to), dims_(DimsOf(input)) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = Output(ctx, outputs, 0, to_, dims_);
    LaunchCast(from_, to_, inputs[0].tensor.data, out.data, ElementCount(dims_), stream());
  }
  bool CaptureSafe() const override { return true; }

 private:
  nxrt_dtype from_;
  nxrt_dtype to_;
  std::vector<int64_t> dims_;
};

}  // namespace

std::unique_ptr<sdk::Kernel> MakeElementwiseKernel(const DeviceContext& context,
                                                   const sdk::Node& node,
                                                   std::span<const nxrt_shape> inputs, int64_t) {
  static const std::map<std::string, UnaryOp, std::less<>> unary = {
      {"Relu", UnaryOp::kRelu}, {"Sigmoid", UnaryOp::kSigmoid}, {"Tanh", UnaryOp::kTanh},
      {"Neg", UnaryOp::kNeg},   {"Exp", UnaryOp::kExp},         {"Sqrt", UnaryOp::kSqrt},
      {"Erf", UnaryOp::kErf}};
  static const std::map<std::string, BinaryOp, std::less<>> binary = {{"Add", BinaryOp::kAdd},
                                                                      {"Sub", BinaryOp::kSub},
                                                                      {"Mul", BinaryOp::kMul},
                                                                      {"Div", BinaryOp::kDiv},
                                                                      {"Pow", BinaryOp::kPow}};
  const std::string_view op = node.op_type();
  if (const auto found = unary.find(op); found != unary.end()) {
    return std::make_unique<UnaryKernel>(context, found->second, inputs[0]);
  }
  if (op == "Gelu") {
    const bool tanh = node.AttrString("approximate", "none") == "tanh";
    return std::make_unique<UnaryKernel>(context, tanh ? UnaryOp::kGeluTanh : UnaryOp::kGelu,
                                         inputs[0]);
  }
  if (const auto found = binary.find(op); found != binary.end()) {
    return std::make_unique<BinaryKernel>(context, node, found->second, inputs[0], inputs[1]);
  }
  if (op == "Cast") {
    return std::make_unique<CastKernel>(
        context, inputs[0], static_cast<nxrt_dtype>(node.AttrInt("to", NXRT_DTYPE_UNDEFINED)));
  }
  return nullptr;
}

}  // namespace nxrt::cuda
