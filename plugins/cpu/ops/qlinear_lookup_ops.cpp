// ONNX Runtime's com.microsoft QLinearSigmoid and QLinearLeakyRelu, the
// activations of its QOperator form: Y = quantize(f(dequantize(X))) for
// 8-bit X and Y with scales and zero points per tensor, through a table of
// the 256 inputs (quantized/byte_table.hpp), as in ONNX Runtime. f runs in
// float32; the table's entries are within one step of ONNX Runtime's, whose
// sigmoid is its own approximation.
#include <cmath>
#include <string>

#include "attention/kernel_support.hpp"
#include "cpu_kernel.hpp"
#include "quantized/byte_table.hpp"

namespace nxrt::cpu {
namespace {

using Int8Types = TypeList<uint8_t, int8_t>;

enum Input : size_t { kX, kXScale, kXZero, kYScale, kYZero };

struct Sigmoid {
  explicit Sigmoid(const sdk::Node&) {}
  float operator()(float x) const { return 1.0f / (1.0f + std::exp(-x)); }
};

struct LeakyRelu {
  explicit LeakyRelu(const sdk::Node& node) : alpha(node.AttrFloat("alpha", 0.01f)) {}
  float operator()(float x) const { return x >= 0.0f ? x : x * alpha; }
  float alpha;
};

template <typename F>
class QLinearLookupKernel : public CpuKernel {
 public:
  QLinearLookupKernel(const sdk::Node& node, std::span<const nxrt_shape> shapes)
      : CpuKernel(true),
        name_(NodeText(node)),
        f_(node),
        dtype_(shapes[kX].dtype),
        dims_(shapes[kX].dims, shapes[kX].dims + shapes[kX].rank) {
    for (size_t i : {kXScale, kXZero, kYScale, kYZero}) {
      RequireElements(shapes, i, 1, name_, "a scale or zero point per tensor");
    }
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& y = PrepareOutput(ctx, outputs, 0, dtype_, dims_);
    Dispatch(Int8Types{}, dtype_, "QLinearLookup", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto zero = [&](size_t i) {
        return IsPresent(inputs, i) ? static_cast<float>(*DataAs<T>(inputs[i].tensor)) : 0.0f;
      };
      table_.Update<T>({*DataAs<float>(inputs[kXScale].tensor), zero(kXZero),
                        *DataAs<float>(inputs[kYScale].tensor), zero(kYZero)},
                       f_);
      table_.Apply(static_cast<const uint8_t*>(inputs[kX].tensor.data), ElementCount(dims_),
                   static_cast<uint8_t*>(y.data));
    });
  }

 private:
  std::string name_;
  F f_;
  nxrt_dtype dtype_;
  Dims dims_;
  ByteTable table_;
};

template <typename F>
OpDefinition QLinearLookup() {
  return {1, ClaimInputDtype(Int8Types{}),
          [](const sdk::Node& node, std::span<const nxrt_shape> shapes, int64_t) {
            return std::make_unique<QLinearLookupKernel<F>>(node, shapes);
          }};
}

}  // namespace

void RegisterQLinearLookupOps(OpRegistry& r) {
  r.Add("QLinearSigmoid", QLinearLookup<Sigmoid>(), "com.microsoft");
  r.Add("QLinearLeakyRelu", QLinearLookup<LeakyRelu>(), "com.microsoft");
}

}  // namespace nxrt::cpu
