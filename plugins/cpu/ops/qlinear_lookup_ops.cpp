// ONNX Runtime's com.microsoft QLinearSigmoid and QLinearLeakyRelu, the
// activations of its QOperator form: Y = quantize(f(dequantize(X))) for
// 8-bit X and Y with scales and zero points per tensor. An 8-bit input has
// 256 values, so, as in ONNX Runtime, the kernel maps each through f once
// into a table (made again only when the scales or zero points change) and
// the call is one lookup per element. f runs in float32; the table's entries
// are within one step of ONNX Runtime's, whose sigmoid is its own
// approximation.
#include <array>
#include <cmath>
#include <string>

#include "attention/kernel_support.hpp"
#include "cpu_kernel.hpp"
#include "quantized/saturating_round.hpp"

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
      const std::array<float, 4> key = {*DataAs<float>(inputs[kXScale].tensor), zero(kXZero),
                                        *DataAs<float>(inputs[kYScale].tensor), zero(kYZero)};
      if (!table_made_ || key != key_) MakeTable<T>(key);
      // The table is indexed by the byte's bits: a uint8's value, or an
      // int8's value plus 256 below 0.
      const uint8_t* x = static_cast<const uint8_t*>(inputs[kX].tensor.data);
      uint8_t* out = static_cast<uint8_t*>(y.data);
      const int64_t count = ElementCount(dims_);
      for (int64_t i = 0; i < count; ++i) out[i] = table_[x[i]];
    });
  }

 private:
  template <typename T>
  void MakeTable(const std::array<float, 4>& key) {
    const auto [x_scale, x_zero, y_scale, y_zero] = key;
    for (int bits = 0; bits < 256; ++bits) {
      const float value = static_cast<float>(static_cast<T>(static_cast<uint8_t>(bits)));
      const T q = SaturatingRound<T>(f_((value - x_zero) * x_scale) / y_scale, y_zero);
      table_[bits] = static_cast<uint8_t>(q);
    }
    key_ = key;
    table_made_ = true;
  }

  std::string name_;
  F f_;
  nxrt_dtype dtype_;
  Dims dims_;
  std::array<float, 4> key_{};  // x_scale, x_zero, y_scale, y_zero of table_
  bool table_made_ = false;
  std::array<uint8_t, 256> table_{};
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
