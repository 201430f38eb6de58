// Reductions (Reduce*) and ArgMax/ArgMin. Axes come from the attribute in
// older opsets and from the second input in newer ones.
#include <vector>

#include "inference/rule_registry.hpp"

namespace nxrt::graph::inference {
namespace {

bool AxesFromInput(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  return op == "ReduceSum" ? ctx.opset() >= 13 : ctx.opset() >= 18;
}

Status Reduce(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* data = ctx.input_shape(0);
  if (data == nullptr) return ctx.Unknown("input 0 has unknown rank");
  const bool keep = ctx.Int("keepdims", 1) != 0;
  std::optional<std::vector<int64_t>> axes;
  if (AxesFromInput(ctx)) {
    axes = ctx.has_input(1) ? ctx.input_ints(1) : std::vector<int64_t>{};
  } else {
    axes = ctx.Ints("axes").value_or(std::vector<int64_t>{});
  }
  if (!axes) {
    if (!keep) return ctx.Unknown("axes are not constant");
    Shape out;
    for (size_t i = 0; i < data->size(); ++i) out.push_back(ctx.symbols().Mint("reduce"));
    ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
    return Status::Ok();
  }
  std::vector<bool> reduced(data->size(), axes->empty());
  if (axes->empty() && ctx.Int("noop_with_empty_axes", 0) != 0) {
    ctx.SetOutput(0, ctx.input_dtype(0), *data);
    return Status::Ok();
  }
  for (int64_t a : *axes) {
    auto axis = ctx.Axis(a, data->size());
    if (!axis) return ctx.ModelError("axis out of range for " + ctx.ShapeText(*data));
    reduced[*axis] = true;
  }
  Shape out;
  for (size_t i = 0; i < data->size(); ++i) {
    if (!reduced[i])
      out.push_back((*data)[i]);
    else if (keep)
      out.push_back(Dim::Static(1));
  }
  ctx.SetOutput(0, ctx.input_dtype(0), out);
  // A product or sum over a known rank-1 shape tensor stays a Dim.
  const Elements* e = ctx.input_elements(0);
  const std::string& op = ctx.node().op_type;
  if (e != nullptr && data->size() == 1 && (op == "ReduceProd" || op == "ReduceSum")) {
    SymbolExpr expr{op == "ReduceProd" ? SymbolExpr::Op::kMul : SymbolExpr::Op::kAdd, {}};
    for (const auto& d : *e) {
      if (!d) return Status::Ok();
      expr.operands.push_back(SymbolInterner::Operand(*d));
    }
    ctx.SetOutputElements(0, {ctx.symbols().Lower(std::move(expr))});
  }
  return Status::Ok();
}

Status ArgReduce(NodeContext& ctx) {
  ctx.SetOutputDtype(0, DataType::kInt64);
  const Shape* data = ctx.input_shape(0);
  if (data == nullptr) return ctx.Unknown("input 0 has unknown rank");
  auto axis = ctx.Axis(ctx.Int("axis", 0), data->size());
  if (!axis) return ctx.ModelError("axis out of range for " + ctx.ShapeText(*data));
  Shape out = *data;
  if (ctx.Int("keepdims", 1) != 0)
    out[*axis] = Dim::Static(1);
  else
    out.erase(out.begin() + *axis);
  ctx.SetOutput(0, DataType::kInt64, std::move(out));
  return Status::Ok();
}

}  // namespace

void AddReductionRules(RuleTable& t) {
  for (const char* op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
                         "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare"}) {
    t.Add("", op, Reduce);
  }
  t.Add("", "ArgMax", ArgReduce);
  t.Add("", "ArgMin", ArgReduce);
}

}  // namespace nxrt::graph::inference
