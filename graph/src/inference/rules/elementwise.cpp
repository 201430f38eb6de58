// Unary maps, broadcasting binary and variadic ops, comparisons, Where and
// PRelu. Every broadcast goes through NodeContext::BroadcastShapes, which
// calls SymbolInterner::BroadcastDim.
#include <array>
#include <optional>
#include <vector>

#include "inference/element_propagation.hpp"
#include "inference/integer_ops.hpp"
#include "inference/rule_registry.hpp"

namespace nxrt::graph::inference {
namespace {

Status SameAsFirstInput(NodeContext& ctx) {
  const Shape* shape = ctx.input_shape(0);
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  if (shape == nullptr) return ctx.Unknown("input 0 has unknown rank");
  ctx.SetOutput(0, ctx.input_dtype(0), *shape);
  return Status::Ok();
}

Status BoolOfFirstInput(NodeContext& ctx) {
  ctx.SetOutputDtype(0, DataType::kBool);
  const Shape* shape = ctx.input_shape(0);
  if (shape == nullptr) return ctx.Unknown("input 0 has unknown rank");
  ctx.SetOutput(0, DataType::kBool, *shape);
  return Status::Ok();
}

// Broadcast of every present input; nullopt (with the status set) on failure.
Result<Shape> BroadcastAll(NodeContext& ctx, size_t first) {
  std::optional<Shape> out;
  for (size_t i = first; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    const Shape* s = ctx.input_shape(i);
    if (s == nullptr) return ctx.Unknown("input " + std::to_string(i) + " has unknown rank");
    if (!out) {
      out = *s;
      continue;
    }
    NXRT_ASSIGN_OR_RETURN(out, ctx.BroadcastShapes(*out, *s));
  }
  if (!out) return ctx.Unknown("no inputs");
  return *out;
}

std::vector<size_t> PresentInputs(const NodeContext& ctx, size_t first) {
  std::vector<size_t> out;
  for (size_t i = first; i < ctx.num_inputs(); ++i) {
    if (ctx.has_input(i)) out.push_back(i);
  }
  return out;
}

std::optional<int64_t> BothStatic(std::span<const Dim> a, auto fn) {
  if (!a[0].is_static() || !a[1].is_static()) return std::nullopt;
  return fn(a[0].extent(), a[1].extent());
}

// Element arithmetic for the integer ops that build shape tensors.
ElementFn ArithmeticFn(NodeContext& ctx, const std::string& op) {
  SymbolInterner& symbols = ctx.symbols();
  if (op == "Add")
    return [&symbols](std::span<const Dim> a) -> std::optional<Dim> {
      return symbols.Add(a[0], a[1]);
    };
  if (op == "Sub")
    return [&symbols](std::span<const Dim> a) -> std::optional<Dim> {
      return symbols.Sub(a[0], a[1]);
    };
  if (op == "Mul")
    return [&symbols](std::span<const Dim> a) -> std::optional<Dim> {
      return symbols.Mul(a[0], a[1]);
    };
  if (op == "Div")
    return [&symbols](std::span<const Dim> a) -> std::optional<Dim> {
      if (a[0].is_static() && a[1].is_static()) {
        if (a[1].extent() == 0 || (a[0].extent() == INT64_MIN && a[1].extent() == -1)) {
          return std::nullopt;
        }
        return Dim::Static(a[0].extent() / a[1].extent());  // ONNX truncates
      }
      return symbols.FloorDiv(a[0], a[1]);
    };
  if (op == "Mod")
    return [&symbols](std::span<const Dim> a) -> std::optional<Dim> {
      return symbols.Mod(a[0], a[1]);
    };
  if (op == "Max" || op == "Min") {
    const bool is_max = op == "Max";
    return [&symbols, is_max](std::span<const Dim> a) -> std::optional<Dim> {
      Dim acc = a[0];
      for (size_t i = 1; i < a.size(); ++i) {
        acc = is_max ? symbols.Max(acc, a[i]) : symbols.Min(acc, a[i]);
      }
      return acc;
    };
  }
  if (op == "Equal")
    // An extent never equals a negative number, which decides the -1 tests
    // exporters put in front of Expand and Reshape.
    return [&symbols](std::span<const Dim> a) -> std::optional<Dim> {
      if (a[0] == a[1]) return Dim::Static(1);
      if (a[0].is_static() && a[1].is_static()) return Dim::Static(0);
      const auto negative = [](Dim d) { return d.is_static() && d.extent() < 0; };
      if ((negative(a[0]) && symbols.NonNegative(a[1])) ||
          (negative(a[1]) && symbols.NonNegative(a[0]))) {
        return Dim::Static(0);
      }
      return std::nullopt;
    };
  auto compare = [](auto pred) {
    return [pred](std::span<const Dim> a) -> std::optional<Dim> {
      auto v = BothStatic(a, [&](int64_t x, int64_t y) -> int64_t { return pred(x, y) ? 1 : 0; });
      return v ? std::optional<Dim>(Dim::Static(*v)) : std::nullopt;
    };
  };
  if (op == "Less") return compare([](int64_t x, int64_t y) { return x < y; });
  if (op == "LessOrEqual") return compare([](int64_t x, int64_t y) { return x <= y; });
  if (op == "Greater") return compare([](int64_t x, int64_t y) { return x > y; });
  if (op == "GreaterOrEqual") return compare([](int64_t x, int64_t y) { return x >= y; });
  if (op == "And") return compare([](int64_t x, int64_t y) { return x != 0 && y != 0; });
  if (op == "Or") return compare([](int64_t x, int64_t y) { return x != 0 || y != 0; });
  if (op == "Xor") return compare([](int64_t x, int64_t y) { return (x != 0) != (y != 0); });
  return nullptr;
}

Status Broadcasting(NodeContext& ctx, DataType dtype) {
  ctx.SetOutputDtype(0, dtype);
  NXRT_ASSIGN_OR_RETURN(Shape shape, BroadcastAll(ctx, 0));
  ctx.SetOutput(0, dtype, shape);
  if (ElementFn fn = ArithmeticFn(ctx, ctx.node().op_type)) {
    PropagateElementwise(ctx, PresentInputs(ctx, 0), shape, fn);
  }
  return Status::Ok();
}

Status SameTypeBroadcast(NodeContext& ctx) {
  DataType dtype = DataType::kUndefined;
  for (size_t i = 0; i < ctx.num_inputs() && dtype == DataType::kUndefined; ++i) {
    dtype = ctx.input_dtype(i);
  }
  return Broadcasting(ctx, dtype);
}

Status FirstTypeBroadcast(NodeContext& ctx) {
  return Broadcasting(ctx, ctx.input_dtype(0));
}

// com.microsoft QLinearAdd and QLinearMul: A (input 0) and B (input 3)
// broadcast, in A's dtype.
Status QLinearBroadcast(NodeContext& ctx) {
  const DataType dtype = ctx.input_dtype(0);
  ctx.SetOutputDtype(0, dtype);
  const Shape* a = ctx.input_shape(0);
  const Shape* b = ctx.input_shape(3);
  if (a == nullptr || b == nullptr) return ctx.Unknown("an operand has unknown rank");
  NXRT_ASSIGN_OR_RETURN(Shape shape, ctx.BroadcastShapes(*a, *b));
  ctx.SetOutput(0, dtype, std::move(shape));
  return Status::Ok();
}

Status BoolBroadcast(NodeContext& ctx) {
  return Broadcasting(ctx, DataType::kBool);
}

Status Where(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(1));
  NXRT_ASSIGN_OR_RETURN(Shape shape, BroadcastAll(ctx, 0));
  ctx.SetOutput(0, ctx.input_dtype(1), shape);
  const std::array<size_t, 3> inputs{0, 1, 2};
  PropagateElementwise(ctx, inputs, shape, [](std::span<const Dim> a) -> std::optional<Dim> {
    if (!a[0].is_static()) return std::nullopt;
    return a[0].extent() != 0 ? a[1] : a[2];
  });
  return Status::Ok();
}

// Unary maps whose element values are tracked through.
Status UnaryTracked(NodeContext& ctx) {
  NXRT_RETURN_IF_ERROR(SameAsFirstInput(ctx));
  const Shape& shape = *ctx.input_shape(0);
  const std::string& op = ctx.node().op_type;
  SymbolInterner& symbols = ctx.symbols();
  const std::array<size_t, 1> inputs{0};
  if (op == "Identity") {
    PropagateElementwise(ctx, inputs, shape, [](std::span<const Dim> a) { return a[0]; });
  } else if (op == "Neg") {
    PropagateElementwise(ctx, inputs, shape, [&symbols](std::span<const Dim> a) {
      return std::optional<Dim>(symbols.Sub(Dim::Static(0), a[0]));
    });
  } else if (op == "Abs") {
    PropagateElementwise(ctx, inputs, shape, [](std::span<const Dim> a) -> std::optional<Dim> {
      if (a[0].is_symbolic()) return a[0];
      if (a[0].extent() == INT64_MIN) return std::nullopt;
      return Dim::Static(a[0].extent() < 0 ? -a[0].extent() : a[0].extent());
    });
  }
  return Status::Ok();
}

Status Not(NodeContext& ctx) {
  NXRT_RETURN_IF_ERROR(BoolOfFirstInput(ctx));
  const std::array<size_t, 1> inputs{0};
  PropagateElementwise(ctx, inputs, *ctx.input_shape(0),
                       [](std::span<const Dim> a) -> std::optional<Dim> {
                         if (!a[0].is_static()) return std::nullopt;
                         return Dim::Static(a[0].extent() == 0 ? 1 : 0);
                       });
  return Status::Ok();
}

Status PRelu(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* x = ctx.input_shape(0);
  const Shape* slope = ctx.input_shape(1);
  if (x == nullptr) return ctx.Unknown("input 0 has unknown rank");
  // Before opset 7 the slope is per channel (axis 1), not broadcast.
  if (slope == nullptr || ctx.opset() < 7) {
    ctx.SetOutput(0, ctx.input_dtype(0), *x);
    return Status::Ok();
  }
  NXRT_ASSIGN_OR_RETURN(Shape shape, ctx.BroadcastShapes(*x, *slope));
  ctx.SetOutput(0, ctx.input_dtype(0), shape);
  return Status::Ok();
}

Status Dropout(NodeContext& ctx) {
  NXRT_RETURN_IF_ERROR(SameAsFirstInput(ctx));
  if (ctx.has_output(1)) ctx.SetOutput(1, DataType::kBool, *ctx.input_shape(0));
  return Status::Ok();
}

Status CastLike(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(1));
  const Shape* shape = ctx.input_shape(0);
  if (shape == nullptr) return ctx.Unknown("input 0 has unknown rank");
  ctx.SetOutput(0, ctx.input_dtype(1), *shape);
  return Status::Ok();
}

// Quantize/Dequantize keep the shape; the element type comes from the
// output_dtype attribute when set, else from the zero point (quantize) or the
// scale (dequantize).
Status QuantizeLinear(NodeContext& ctx) {
  const auto declared = DataTypeFromOnnx(static_cast<int32_t>(ctx.Int("output_dtype", 0)));
  DataType dtype = declared.value_or(DataType::kUndefined);
  if (dtype == DataType::kUndefined) {
    const bool quantize = ctx.node().op_type == "QuantizeLinear";
    dtype =
        quantize ? (ctx.has_input(2) ? ctx.input_dtype(2) : DataType::kUint8) : ctx.input_dtype(1);
  }
  ctx.SetOutputDtype(0, dtype);
  const Shape* shape = ctx.input_shape(0);
  if (shape == nullptr) return ctx.Unknown("input 0 has unknown rank");
  ctx.SetOutput(0, dtype, *shape);
  return Status::Ok();
}

}  // namespace

void AddElementwiseRules(RuleTable& t) {
  for (const char* op : {"Acos",
                         "Acosh",
                         "Asin",
                         "Asinh",
                         "Atan",
                         "Atanh",
                         "Ceil",
                         "Cos",
                         "Cosh",
                         "Erf",
                         "Exp",
                         "Floor",
                         "Log",
                         "Reciprocal",
                         "Relu",
                         "Round",
                         "Sigmoid",
                         "Sign",
                         "Sin",
                         "Sinh",
                         "Sqrt",
                         "Tan",
                         "Tanh",
                         "Elu",
                         "Celu",
                         "Selu",
                         "LeakyRelu",
                         "HardSigmoid",
                         "HardSwish",
                         "Softplus",
                         "Softsign",
                         "ThresholdedRelu",
                         "Shrink",
                         "Mish",
                         "Gelu",
                         "Softmax",
                         "LogSoftmax",
                         "Hardmax",
                         "Clip",
                         "CumSum",
                         "LRN",
                         "MeanVarianceNormalization",
                         "Trilu",
                         "ReverseSequence",
                         "RotaryEmbedding",
                         "TensorScatter",
                         "CumProd",
                         "BitwiseNot",
                         "Swish",
                         "ScatterElements",
                         "Scatter",
                         "ScatterND"}) {
    t.Add("", op, SameAsFirstInput);
  }
  for (const char* op : {"QuickGelu", "FastGelu", "BiasGelu", "Gelu", "RotaryEmbedding",
                         "QLinearSigmoid", "QLinearLeakyRelu"}) {
    t.Add("com.microsoft", op, SameAsFirstInput);
  }
  t.Add("pkg.nxrt", "QLinearScalar", SameAsFirstInput);
  for (const char* op : {"Identity", "Neg", "Abs"}) t.Add("", op, UnaryTracked);
  for (const char* op : {"IsInf", "IsNaN"}) t.Add("", op, BoolOfFirstInput);
  t.Add("", "Not", Not);
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Mod", "BitShift", "BitwiseAnd", "BitwiseOr",
                         "BitwiseXor", "Max", "Min", "Sum", "Mean"}) {
    t.Add("", op, SameTypeBroadcast);
  }
  t.Add("", "Pow", FirstTypeBroadcast);
  for (const char* op : {"QLinearAdd", "QLinearMul"}) t.Add("com.microsoft", op, QLinearBroadcast);
  for (const char* op :
       {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor"}) {
    t.Add("", op, BoolBroadcast);
  }
  t.Add("", "Where", Where);
  t.Add("", "PRelu", PRelu);
  t.Add("", "Dropout", Dropout);
  t.Add("", "CastLike", CastLike);
  t.Add("", "QuantizeLinear", QuantizeLinear);
  t.Add("", "DequantizeLinear", QuantizeLinear);
}

}  // namespace nxrt::graph::inference
