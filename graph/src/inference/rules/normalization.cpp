// Normalisations: LayerNormalization, BatchNormalization, InstanceNormalization,
// GroupNormalization, RMSNormalization and the com.microsoft fused forms. The
// main output has the input's shape; statistics outputs keep the leading dims.
#include <vector>

#include "inference/rule_registry.hpp"

namespace nxrt::graph::inference {
namespace {

Status LayerNorm(NodeContext& ctx) {
  const Shape* x = ctx.input_shape(0);
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const auto stash = DataTypeFromOnnx(static_cast<int32_t>(ctx.Int("stash_type", 1)));
  for (size_t i = 1; i < ctx.num_outputs(); ++i)
    ctx.SetOutputDtype(i, stash.value_or(DataType::kFloat32));
  if (x == nullptr) return ctx.Unknown("input 0 has unknown rank");
  ctx.SetOutput(0, ctx.input_dtype(0), *x);
  auto axis = ctx.Axis(ctx.Int("axis", -1), x->size());
  if (!axis) return ctx.ModelError("axis out of range for " + ctx.ShapeText(*x));
  Shape stats(x->begin(), x->begin() + *axis);
  stats.resize(x->size(), Dim::Static(1));
  for (size_t i = 1; i < ctx.num_outputs(); ++i) {
    ctx.SetOutput(i, stash.value_or(DataType::kFloat32), stats);
  }
  return Status::Ok();
}

// Skip-layer-norm forms: output 0 and the optional input+skip sum (last output)
// have the input's shape; mean and inverse std deviation keep leading dims.
Status SkipLayerNorm(NodeContext& ctx) {
  const Shape* x = ctx.input_shape(0);
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    ctx.SetOutputDtype(i, i == 1 || i == 2 ? DataType::kFloat32 : ctx.input_dtype(0));
  }
  if (x == nullptr) return ctx.Unknown("input 0 has unknown rank");
  Shape stats = *x;
  if (!stats.empty()) stats.back() = Dim::Static(1);
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    const bool statistic = i == 1 || i == 2;
    ctx.SetOutput(i, statistic ? DataType::kFloat32 : ctx.input_dtype(0), statistic ? stats : *x);
  }
  return Status::Ok();
}

Status BatchNorm(NodeContext& ctx) {
  const Shape* x = ctx.input_shape(0);
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    ctx.SetOutputDtype(i, ctx.input_dtype(i == 0 ? 0 : 3));
  }
  if (x == nullptr || x->size() < 2) return ctx.Unknown("input 0 has unknown rank");
  ctx.SetOutput(0, ctx.input_dtype(0), *x);
  for (size_t i = 1; i < ctx.num_outputs(); ++i) ctx.SetOutput(i, ctx.input_dtype(3), {(*x)[1]});
  return Status::Ok();
}

Status SameShape(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* x = ctx.input_shape(0);
  if (x == nullptr) return ctx.Unknown("input 0 has unknown rank");
  ctx.SetOutput(0, ctx.input_dtype(0), *x);
  return Status::Ok();
}

}  // namespace

void AddNormalizationRules(RuleTable& t) {
  t.Add("", "LayerNormalization", LayerNorm);
  t.Add("com.microsoft", "SimplifiedLayerNormalization", LayerNorm);
  t.Add("", "SimplifiedLayerNormalization", LayerNorm);
  t.Add("com.microsoft", "SkipLayerNormalization", SkipLayerNorm);
  t.Add("com.microsoft", "SkipSimplifiedLayerNormalization", SkipLayerNorm);
  t.Add("", "BatchNormalization", BatchNorm);
  t.Add("", "InstanceNormalization", SameShape);
  t.Add("", "GroupNormalization", SameShape);
  t.Add("", "RMSNormalization", SameShape);
}

}  // namespace nxrt::graph::inference
