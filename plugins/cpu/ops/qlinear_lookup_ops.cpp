// ONNX Runtime's com.microsoft QLinearSigmoid and QLinearLeakyRelu, the
// activations of its QOperator form, and pkg.nxrt QLinearScalar, a QDQ
// Add, Sub, Mul or Div by a float constant (partitioner/qdq_fusion.hpp):
// Y = quantize(f(dequantize(X))) for 8-bit X and Y with scales and zero
// points per tensor, through a table of the 256 inputs
// (quantized/byte_table.hpp), as in ONNX Runtime. f runs in float32; the
// sigmoid's entries are within one step of ONNX Runtime's, whose sigmoid is
// its own approximation, and QLinearScalar's are the QDQ graph's bits, each
// of its steps rounded once as there.
#include <cmath>
#include <string>

#include "attention/kernel_support.hpp"
#include "cpu_kernel.hpp"
#include "quantized/byte_table.hpp"

namespace nxrt::cpu {
namespace {

using Int8Types = TypeList<uint8_t, int8_t>;

// Each function says where its inputs are: X, its scale and zero point,
// then Y's, with QLinearScalar's constant between X's and Y's.
struct Sigmoid {
  static constexpr size_t kYScale = 3;
  explicit Sigmoid(const sdk::Node&) {}
  float operator()(float x, float) const { return 1.0f / (1.0f + std::exp(-x)); }
};

struct LeakyRelu {
  static constexpr size_t kYScale = 3;
  explicit LeakyRelu(const sdk::Node& node) : alpha(node.AttrFloat("alpha", 0.01f)) {}
  float operator()(float x, float) const { return x >= 0.0f ? x : x * alpha; }
  float alpha;
};

// x op c, or c op x with constant_first = 1, for op Add, Sub, Mul or Div.
struct Scalar {
  static constexpr size_t kYScale = 4;
  static constexpr size_t kOperand = 3;
  enum class Op { kAdd, kSub, kMul, kDiv };
  explicit Scalar(const sdk::Node& node)
      : op(OpNamed(node.AttrString("op", ""), node)),
        constant_first(node.AttrInt("constant_first", 0) != 0) {}
  float operator()(float x, float c) const {
    const float a = constant_first ? c : x, b = constant_first ? x : c;
    switch (op) {
      case Op::kAdd:
        return a + b;
      case Op::kSub:
        return a - b;
      case Op::kMul:
        return a * b;
      case Op::kDiv:
        return a / b;
    }
    return a;
  }
  static Op OpNamed(const std::string& name, const sdk::Node& node) {
    if (name == "Add") return Op::kAdd;
    if (name == "Sub") return Op::kSub;
    if (name == "Mul") return Op::kMul;
    if (name == "Div") return Op::kDiv;
    FailInvalid(NodeText(node) + ": op '" + name +
                "' is none of Add, Sub, Mul and Div; set one of them");
  }
  Op op;
  bool constant_first;
};

enum Input : size_t { kX, kXScale, kXZero };

template <typename F>
class QLinearLookupKernel : public CpuKernel {
 public:
  QLinearLookupKernel(const sdk::Node& node, std::span<const nxrt_shape> shapes)
      : CpuKernel(true),
        name_(NodeText(node)),
        f_(node),
        dtype_(shapes[kX].dtype),
        dims_(shapes[kX].dims, shapes[kX].dims + shapes[kX].rank) {
    for (size_t i : {size_t{kXScale}, size_t{kXZero}, F::kYScale, F::kYScale + 1}) {
      RequireElements(shapes, i, 1, name_, "a scale or zero point per tensor");
    }
    if constexpr (requires { F::kOperand; }) {
      RequireElements(shapes, F::kOperand, 1, name_, "one constant");
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
      float operand = 0.0f;
      if constexpr (requires { F::kOperand; }) operand = *DataAs<float>(inputs[F::kOperand].tensor);
      table_.Update<T>({*DataAs<float>(inputs[kXScale].tensor), zero(kXZero),
                        *DataAs<float>(inputs[F::kYScale].tensor), zero(F::kYScale + 1), operand},
                       [&](float x) { return f_(x, operand); });
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
  return {1,
          [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
            std::optional<std::string> reason = CheckInputDtype(node, inputs, kX, Int8Types{});
            if constexpr (requires { F::kOperand; }) {
              if (!reason) reason = CheckInputDtype(node, inputs, F::kOperand, TypeList<float>{});
            }
            if (!reason && inputs.size() > F::kYScale + 1 &&
                inputs[F::kYScale + 1].dtype != NXRT_DTYPE_UNDEFINED &&
                inputs[F::kYScale + 1].dtype != inputs[kX].dtype) {
              reason = std::string(node.op_type()) + ": Y of another dtype than X";
            }
            return ClaimUnless(reason);
          },
          [](const sdk::Node& node, std::span<const nxrt_shape> shapes, int64_t) {
            return std::make_unique<QLinearLookupKernel<F>>(node, shapes);
          }};
}

}  // namespace

void RegisterQLinearLookupOps(OpRegistry& r) {
  r.Add("QLinearSigmoid", QLinearLookup<Sigmoid>(), "com.microsoft");
  r.Add("QLinearLeakyRelu", QLinearLookup<LeakyRelu>(), "com.microsoft");
  r.Add("QLinearScalar", QLinearLookup<Scalar>(), "pkg.nxrt");
}

}  // namespace nxrt::cpu
