// Constants and shape queries: Constant, Shape, Size and Cast. These are the
// sources of constant propagation: Shape turns a value's dims into known
// element values, so later shape arithmetic stays symbolic instead of unknown.
#include <vector>

#include "inference/dim_algebra.hpp"
#include "inference/rule_registry.hpp"

namespace nxrt::graph::inference {
namespace {

Status Constant(NodeContext& ctx) {
  Elements ints;
  if (const Attribute* a = ctx.attr("value"); a != nullptr && a->tensor) {
    const TensorData& t = ctx.graph().weights->Get(*a->tensor);
    Shape shape;
    for (int64_t d : t.dims) shape.push_back(Dim::Static(d));
    ctx.SetOutput(0, t.dtype, std::move(shape));
    if (auto e = ElementsOfTensor(t, ctx.options().max_tracked_elements)) {
      ctx.SetOutputElements(0, std::move(*e));
    }
    return Status::Ok();
  }
  if (const Attribute* a = ctx.attr("value_int")) {
    ctx.SetOutput(0, DataType::kInt64, {});
    ctx.SetOutputElements(0, {Dim::Static(a->i)});
  } else if (const Attribute* a = ctx.attr("value_ints")) {
    ctx.SetOutput(0, DataType::kInt64, {Dim::Static(static_cast<int64_t>(a->ints.size()))});
    for (int64_t v : a->ints) ints.push_back(Dim::Static(v));
    ctx.SetOutputElements(0, std::move(ints));
  } else if (ctx.attr("value_float")) {
    ctx.SetOutput(0, DataType::kFloat32, {});
  } else if (const Attribute* a = ctx.attr("value_floats")) {
    ctx.SetOutput(0, DataType::kFloat32, {Dim::Static(static_cast<int64_t>(a->floats.size()))});
  } else if (ctx.attr("value_string")) {
    ctx.SetOutput(0, DataType::kString, {});
  } else if (const Attribute* a = ctx.attr("value_strings")) {
    ctx.SetOutput(0, DataType::kString, {Dim::Static(static_cast<int64_t>(a->strings.size()))});
  } else {
    return ctx.Unknown("no value attribute this rule reads");
  }
  return Status::Ok();
}

Status ShapeOp(NodeContext& ctx) {
  ctx.SetOutputDtype(0, DataType::kInt64);
  const Shape* data = ctx.input_shape(0);
  if (data == nullptr) return ctx.Unknown("input 0 has unknown rank");
  const auto rank = static_cast<int64_t>(data->size());
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp(ctx.Int("start", 0));
  const int64_t end = clamp(ctx.Int("end", rank));
  Elements dims;
  for (int64_t i = start; i < end; ++i) dims.push_back((*data)[static_cast<size_t>(i)]);
  ctx.SetOutput(0, DataType::kInt64, {Dim::Static(static_cast<int64_t>(dims.size()))});
  ctx.SetOutputElements(0, std::move(dims));
  return Status::Ok();
}

Status Size(NodeContext& ctx) {
  ctx.SetOutput(0, DataType::kInt64, {});
  const Shape* data = ctx.input_shape(0);
  if (data == nullptr) return Status::Ok();
  ctx.SetOutputElements(0, {Product(ctx.symbols(), *data)});
  return Status::Ok();
}

Status Cast(NodeContext& ctx) {
  const auto to = DataTypeFromOnnx(static_cast<int32_t>(ctx.Int("to", 0)));
  if (!to) return ctx.ModelError("Cast 'to' is not a known data type; fix the attribute");
  ctx.SetOutputDtype(0, *to);
  const Shape* data = ctx.input_shape(0);
  if (data == nullptr) return ctx.Unknown("input 0 has unknown rank");
  ctx.SetOutput(0, *to, *data);
  const Elements* e = ctx.input_elements(0);
  if (e == nullptr || !IsTrackedDtype(*to)) return Status::Ok();
  if (*to != DataType::kBool) {
    ctx.SetOutputElements(0, *e);
    return Status::Ok();
  }
  Elements truth;
  for (const auto& d : *e) {
    truth.push_back(d && d->is_static() ? std::optional<Dim>(Dim::Static(d->extent() != 0))
                                        : std::nullopt);
  }
  ctx.SetOutputElements(0, std::move(truth));
  return Status::Ok();
}

}  // namespace

void AddConstantRules(RuleTable& t) {
  t.Add("", "Constant", Constant);
  t.Add("", "Shape", ShapeOp);
  t.Add("", "Size", Size);
  t.Add("", "Cast", Cast);
}

}  // namespace nxrt::graph::inference
