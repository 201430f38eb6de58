// Ops whose output extents depend on tensor values: NonZero, Unique,
// Compress, NonMaxSuppression, TopK, Range, ConstantOfShape and
// ImageDecoder. An extent that
// cannot be read from known element values becomes a fresh Minted symbol with
// no provenance, bound at run time from the output that carries it.
#include <algorithm>
#include <cmath>
#include <vector>

#include "inference/integer_ops.hpp"
#include "inference/rule_registry.hpp"
#include "nxrt/support/checked_math.hpp"

namespace nxrt::graph::inference {
namespace {

Status NonZero(NodeContext& ctx) {
  ctx.SetOutputDtype(0, DataType::kInt64);
  const Shape* data = ctx.input_shape(0);
  if (data == nullptr) return ctx.Unknown("input 0 has unknown rank");
  ctx.SetOutput(0, DataType::kInt64,
                {Dim::Static(static_cast<int64_t>(data->size())), ctx.symbols().Mint("nonzero")});
  return Status::Ok();
}

Status Unique(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  for (size_t i = 1; i < 4; ++i) ctx.SetOutputDtype(i, DataType::kInt64);
  const Shape* data = ctx.input_shape(0);
  if (data == nullptr) return ctx.Unknown("input 0 has unknown rank");
  const Dim count = ctx.symbols().Mint("unique");
  if (const Attribute* axis_attr = ctx.attr("axis")) {
    auto axis = ctx.Axis(axis_attr->i, data->size());
    if (!axis) return ctx.ModelError("axis out of range for " + ctx.ShapeText(*data));
    Shape y = *data;
    y[*axis] = count;
    ctx.SetOutput(0, ctx.input_dtype(0), std::move(y));
    ctx.SetOutput(2, DataType::kInt64, {(*data)[*axis]});
  } else {
    ctx.SetOutput(0, ctx.input_dtype(0), {count});
    Dim total = Dim::Static(1);
    for (Dim d : *data) total = ctx.symbols().Mul(total, d);
    ctx.SetOutput(2, DataType::kInt64, {total});
  }
  ctx.SetOutput(1, DataType::kInt64, {count});
  ctx.SetOutput(3, DataType::kInt64, {count});
  return Status::Ok();
}

Status Compress(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* data = ctx.input_shape(0);
  if (data == nullptr) return ctx.Unknown("input 0 has unknown rank");
  const Dim kept = ctx.symbols().Mint("compress");
  if (const Attribute* axis_attr = ctx.attr("axis")) {
    auto axis = ctx.Axis(axis_attr->i, data->size());
    if (!axis) return ctx.ModelError("axis out of range for " + ctx.ShapeText(*data));
    Shape out = *data;
    out[*axis] = kept;
    ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  } else {
    ctx.SetOutput(0, ctx.input_dtype(0), {kept});
  }
  return Status::Ok();
}

Status NonMaxSuppression(NodeContext& ctx) {
  ctx.SetOutput(0, DataType::kInt64, {ctx.symbols().Mint("selected"), Dim::Static(3)});
  return Status::Ok();
}

Status TopK(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  ctx.SetOutputDtype(1, DataType::kInt64);
  const Shape* data = ctx.input_shape(0);
  if (data == nullptr) return ctx.Unknown("input 0 has unknown rank");
  auto axis = ctx.Axis(ctx.Int("axis", -1), data->size());
  if (!axis) return ctx.ModelError("axis out of range for " + ctx.ShapeText(*data));
  std::optional<Dim> k;
  if (ctx.opset() < 10) {
    k = Dim::Static(ctx.Int("k", 0));
  } else if (const Elements* e = ctx.input_elements(1); e != nullptr && e->size() == 1) {
    k = (*e)[0];
  }
  Shape out = *data;
  out[*axis] = k ? ctx.symbols().AsExtent(*k) : ctx.symbols().Mint("topk");
  ctx.SetOutput(0, ctx.input_dtype(0), out);
  ctx.SetOutput(1, DataType::kInt64, out);
  return Status::Ok();
}

// start, limit and delta of a floating Range whose inputs are all constant.
std::optional<std::vector<double>> ConstantNumbers(NodeContext& ctx) {
  std::vector<double> out;
  for (size_t i = 0; i < 3; ++i) {
    const TensorData* t = ctx.input_constant(i);
    auto v = t != nullptr ? NumbersOfTensor(*t, 1) : std::nullopt;
    if (!v || v->size() != 1) return std::nullopt;
    out.push_back((*v)[0]);
  }
  return out;
}

Status Range(NodeContext& ctx) {
  const DataType dtype = ctx.input_dtype(0);
  ctx.SetOutputDtype(0, dtype);
  auto scalar = [&](size_t i) -> std::optional<Dim> {
    const Elements* e = ctx.input_elements(i);
    return e != nullptr && e->size() == 1 ? (*e)[0] : std::nullopt;
  };
  std::optional<Dim> start = scalar(0), limit = scalar(1), delta = scalar(2);
  SymbolInterner& s = ctx.symbols();
  Dim count = Dim::Static(0);
  if (start && limit && delta && start->is_static() && limit->is_static() && delta->is_static()) {
    const int64_t step = delta->extent();
    if (step == 0) return ctx.ModelError("Range delta is zero");
    const auto span = CheckedSub(limit->extent(), start->extent());
    if (!span) return ctx.ModelError("Range span overflows");
    const auto n_checked = EvaluateBinary(SymbolExpr::Op::kCeilDiv, *span, step);
    if (!n_checked) return ctx.ModelError("Range length overflows");
    const int64_t n = std::max<int64_t>(*n_checked, 0);
    count = Dim::Static(n);
    if (static_cast<size_t>(n) <= ctx.options().max_tracked_elements && IsTrackedDtype(dtype)) {
      Elements values;
      for (int64_t i = 0; i < n; ++i) values.push_back(Dim::Static(start->extent() + i * step));
      ctx.SetOutputElements(0, std::move(values));
    }
  } else if (auto numbers = ConstantNumbers(ctx)) {
    const double span = ((*numbers)[1] - (*numbers)[0]) / (*numbers)[2];
    if (!std::isfinite(span)) return ctx.ModelError("Range delta is zero or not finite");
    const double steps = std::ceil(span);
    if (steps >= 9223372036854775808.0) return ctx.ModelError("Range length overflows");
    count = Dim::Static(steps > 0 ? static_cast<int64_t>(steps) : 0);
  } else if (start && limit && delta && delta->is_static() && delta->extent() > 0) {
    count = s.AsExtent(s.CeilDiv(s.Sub(*limit, *start), *delta));
  } else {
    count = s.Mint("range");
  }
  ctx.SetOutput(0, dtype, {count});
  return Status::Ok();
}

Status ConstantOfShape(NodeContext& ctx) {
  DataType dtype = DataType::kFloat32;
  std::optional<Dim> fill = Dim::Static(0);
  if (const Attribute* value = ctx.attr("value"); value != nullptr && value->tensor) {
    const TensorData& t = ctx.graph().weights->Get(*value->tensor);
    dtype = t.dtype;
    auto e = ElementsOfTensor(t, 1);
    fill = e && e->size() == 1 ? (*e)[0] : std::nullopt;
  }
  ctx.SetOutputDtype(0, dtype);
  std::optional<std::vector<Dim>> dims = ctx.input_dims_or_mint(0, "constant_of_shape");
  if (!dims) return ctx.Unknown("the shape's length is not known");
  Shape out;
  for (Dim d : *dims) {
    if (d.is_static() && d.extent() < 0) return ctx.ModelError("negative extent in shape");
    out.push_back(d);
  }
  ctx.SetOutput(0, dtype, out);
  size_t count = 1;
  bool all_static = true;
  for (Dim d : out) {
    all_static = all_static && d.is_static();
    if (d.is_static()) count *= static_cast<size_t>(d.extent());
  }
  if (all_static && fill && IsTrackedDtype(dtype) && count <= ctx.options().max_tracked_elements) {
    ctx.SetOutputElements(0, Elements(count, fill));
  }
  return Status::Ok();
}

// ImageDecoder: [height, width, channels] uint8, the extents those of the
// encoded image; 1 channel for Grayscale, else 3.
Status ImageDecoder(NodeContext& ctx) {
  const int64_t channels = ctx.String("pixel_format", "RGB") == "Grayscale" ? 1 : 3;
  ctx.SetOutput(0, DataType::kUint8,
                {ctx.symbols().Mint("height"), ctx.symbols().Mint("width"), Dim::Static(channels)});
  return Status::Ok();
}

}  // namespace

void AddDataDependentRules(RuleTable& t) {
  t.Add("", "NonZero", NonZero);
  t.Add("", "Unique", Unique);
  t.Add("", "Compress", Compress);
  t.Add("", "NonMaxSuppression", NonMaxSuppression);
  t.Add("", "TopK", TopK);
  t.Add("", "Range", Range);
  t.Add("", "ConstantOfShape", ConstantOfShape);
  t.Add("", "ImageDecoder", ImageDecoder);
}

}  // namespace nxrt::graph::inference
