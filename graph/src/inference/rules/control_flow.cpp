// If, Loop and Scan, whose bodies are inferred through body_inference.hpp.
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "inference/body_inference.hpp"
#include "inference/rule_registry.hpp"

namespace nxrt::graph::inference {
namespace {

// Dims two shapes agree on; a fresh symbol where they differ.
std::optional<Shape> Merge(NodeContext& ctx, const std::optional<Shape>& a,
                           const std::optional<Shape>& b) {
  if (!a || !b || a->size() != b->size()) return std::nullopt;
  Shape out;
  for (size_t i = 0; i < a->size(); ++i) {
    out.push_back((*a)[i] == (*b)[i] ? (*a)[i] : ctx.symbols().Mint("branch"));
  }
  return out;
}

Status If(NodeContext& ctx) {
  Graph* then_branch = Body(ctx, "then_branch");
  Graph* else_branch = Body(ctx, "else_branch");
  if (then_branch == nullptr || else_branch == nullptr) return ctx.Unknown("branch missing");
  Status then_status = InferBody(ctx, *then_branch);
  Status else_status = InferBody(ctx, *else_branch);
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    if (i >= then_branch->outputs.size() || i >= else_branch->outputs.size()) break;
    const Value& t = then_branch->value(then_branch->outputs[i]);
    const Value& e = else_branch->value(else_branch->outputs[i]);
    Value* out = ctx.output(i);
    if (out == nullptr) continue;
    if (t.kind != ValueKind::kUnknown) out->kind = t.kind;
    ctx.SetOutputDtype(i, t.dtype != DataType::kUndefined ? t.dtype : e.dtype);
    auto merged = Merge(ctx, ExportShape(ctx, *then_branch, t), ExportShape(ctx, *else_branch, e));
    if (merged) out->shape = *merged;
  }
  if (!then_status.ok()) return ctx.Unknown("then branch: " + then_status.message());
  if (!else_status.ok()) return ctx.Unknown("else branch: " + else_status.message());
  return Status::Ok();
}

// Carried values may change shape from one iteration to the next (a Concat
// appends, a sequence grows). When the body gives back another shape than
// it took, its carried input keeps the dims the two agree on, gets a fresh
// symbol for each other dim (or no shape when the ranks differ), and the
// body is inferred again from its shapes as they were before. Returns
// whether any carried input changed.
bool GeneraliseCarried(Graph& body, size_t carried) {
  bool changed = false;
  for (size_t k = 0; k < carried; ++k) {
    if (k + 2 >= body.inputs.size() || k + 1 >= body.outputs.size()) break;
    Value& in = body.value(body.inputs[k + 2]);
    const Value& out = body.value(body.outputs[k + 1]);
    if (!in.shape || !out.shape || *in.shape == *out.shape) continue;
    changed = true;
    if (in.shape->size() != out.shape->size()) {
      in.shape.reset();
      continue;
    }
    for (size_t d = 0; d < in.shape->size(); ++d) {
      if ((*in.shape)[d] == (*out.shape)[d]) continue;
      const std::string name = "loop_carried_" + std::to_string(body.symbols.size());
      (*in.shape)[d] = Dim::Symbolic(body.DeclareSymbol(name));
    }
  }
  return changed;
}

Status Loop(NodeContext& ctx) {
  Graph* body = Body(ctx, "body");
  if (body == nullptr) return ctx.Unknown("body missing");
  std::vector<std::optional<Shape>> uninferred;
  for (const Value& v : body->values) uninferred.push_back(v.shape);
  SetInput(ctx, *body, 0, DataType::kInt64, Shape{});
  SetInput(ctx, *body, 1, DataType::kBool, Shape{});
  const size_t carried = ctx.num_inputs() >= 2 ? ctx.num_inputs() - 2 : 0;
  for (size_t i = 0; i < carried; ++i) {
    const Value* initial = ctx.input(i + 2);
    if (initial == nullptr) continue;
    SetInput(ctx, *body, i + 2, initial->dtype, initial->shape, initial->kind);
  }
  Status status = InferBody(ctx, *body);
  if (GeneraliseCarried(*body, carried)) {
    for (size_t i = 0; i < uninferred.size(); ++i) {
      if (!body->values[i].is_graph_input) body->values[i].shape = uninferred[i];
    }
    status = InferBody(ctx, *body);
  }
  const Dim trips = ctx.symbols().Mint("trips");
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    const size_t body_output = i + 1;  // the body's output 0 is the condition
    if (body_output >= body->outputs.size() || ctx.output(i) == nullptr) continue;
    const Value& b = body->value(body->outputs[body_output]);
    if (b.kind != ValueKind::kUnknown) ctx.output(i)->kind = b.kind;
    ctx.SetOutputDtype(i, b.dtype);
    std::optional<Shape> shape = ExportShape(ctx, *body, b);
    if (i < carried) {
      const Value* initial = ctx.input(i + 2);
      if (initial != nullptr) shape = Merge(ctx, initial->shape, shape);
      if (shape) ctx.output(i)->shape = *shape;
    } else if (shape && b.kind != ValueKind::kSequence && b.kind != ValueKind::kOptionalSequence &&
               b.kind != ValueKind::kOptionalTensor) {
      shape->insert(shape->begin(), trips);
      ctx.output(i)->shape = *shape;
    }
  }
  if (!status.ok()) return ctx.Unknown("body: " + status.message());
  return Status::Ok();
}

Status Scan(NodeContext& ctx) {
  Graph* body = Body(ctx, "body");
  if (body == nullptr) return ctx.Unknown("body missing");
  const auto scan_inputs = static_cast<size_t>(ctx.Int("num_scan_inputs", 0));
  const size_t first = ctx.opset() < 9 ? 1 : 0;  // opset 8 has a sequence_lens input first
  if (ctx.num_inputs() < first + scan_inputs) return ctx.ModelError("too few inputs");
  const size_t states = ctx.num_inputs() - first - scan_inputs;
  const auto input_axes = ctx.Ints("scan_input_axes").value_or(std::vector<int64_t>{});
  const auto output_axes = ctx.Ints("scan_output_axes").value_or(std::vector<int64_t>{});
  const size_t batch_offset = first;  // opset 8 keeps a leading batch axis
  std::optional<Dim> length;
  for (size_t i = 0; i < states + scan_inputs; ++i) {
    const Value* in = ctx.input(first + i);
    if (in == nullptr) continue;
    std::optional<Shape> shape = in->shape;
    if (i >= states && shape) {
      const int64_t raw = i - states < input_axes.size() ? input_axes[i - states] : 0;
      auto axis = ctx.Axis(raw + static_cast<int64_t>(batch_offset), shape->size());
      if (!axis) return ctx.ModelError("scan input axis out of range");
      if (!length) length = (*shape)[*axis];
      shape->erase(shape->begin() + *axis);
      if (batch_offset) shape->erase(shape->begin());
    } else if (shape && batch_offset && !shape->empty()) {
      shape->erase(shape->begin());
    }
    SetInput(ctx, *body, i, in->dtype, shape);
  }
  Status status = InferBody(ctx, *body);
  for (size_t i = 0; i < ctx.num_outputs() && i < body->outputs.size(); ++i) {
    const Value& b = body->value(body->outputs[i]);
    ctx.SetOutputDtype(i, b.dtype);
    std::optional<Shape> shape = ExportShape(ctx, *body, b);
    if (!shape || ctx.output(i) == nullptr) continue;
    if (i >= states) {
      const int64_t raw = i - states < output_axes.size() ? output_axes[i - states] : 0;
      auto axis = ctx.Axis(raw, shape->size() + 1);
      if (!axis) return ctx.ModelError("scan output axis out of range");
      shape->insert(shape->begin() + *axis, length ? *length : ctx.symbols().Mint("scan"));
    }
    if (batch_offset) {
      const Shape* batch_source = ctx.input_shape(first);
      shape->insert(shape->begin(), batch_source && !batch_source->empty()
                                        ? (*batch_source)[0]
                                        : ctx.symbols().Mint("batch"));
    }
    ctx.output(i)->shape = *shape;
  }
  if (!status.ok()) return ctx.Unknown("body: " + status.message());
  return Status::Ok();
}

}  // namespace

void AddControlFlowRules(RuleTable& t) {
  t.Add("", "If", If);
  t.Add("", "Loop", Loop);
  t.Add("", "Scan", Scan);
}

}  // namespace nxrt::graph::inference
