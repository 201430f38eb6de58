// Ops that select or join parts of tensors along an axis: Concat, Split,
// Slice, Gather, GatherElements, GatherND and OneHot. Their element values are
// tracked for rank-1 shape tensors, so Shape -> Slice/Gather -> Concat keeps
// every extent as the Dim it came from.
#include <algorithm>
#include <limits>
#include <vector>

#include "inference/dim_algebra.hpp"
#include "inference/rule_registry.hpp"

namespace nxrt::graph::inference {
namespace {

// The concatenation of inputs first, first + step, ... along the axis, in
// `dtype`. The inputs' known elements join too where `elements` says so
// (Concat's values are its inputs'; QLinearConcat requantises them).
Status ConcatOf(NodeContext& ctx, size_t first, size_t step, DataType dtype, bool elements) {
  ctx.SetOutputDtype(0, dtype);
  std::optional<Shape> out;
  std::optional<int64_t> axis;
  SymbolExpr total{SymbolExpr::Op::kAdd, {}};
  Elements joined;
  bool elements_known = elements;
  for (size_t i = first; i < ctx.num_inputs(); i += step) {
    const Shape* s = ctx.input_shape(i);
    if (s == nullptr) return ctx.Unknown("input " + std::to_string(i) + " has unknown rank");
    if (!out) {
      out = *s;
      axis = ctx.Axis(ctx.Int("axis", 0), s->size());
      if (!axis) return ctx.ModelError("axis out of range for " + ctx.ShapeText(*s));
    } else if (s->size() != out->size()) {
      return ctx.ModelError("inputs " + ctx.ShapeText(*out) + " and " + ctx.ShapeText(*s) +
                            " differ in rank");
    } else {
      for (size_t k = 0; k < s->size(); ++k) {
        if (static_cast<int64_t>(k) == *axis) continue;
        auto d = ctx.symbols().BroadcastDim((*out)[k], (*s)[k]);
        if (!d.ok()) {
          return ctx.ModelError("inputs " + ctx.ShapeText(*out) + " and " + ctx.ShapeText(*s) +
                                " differ off the concat axis");
        }
        (*out)[k] = *d;
      }
    }
    total.operands.push_back(SymbolInterner::Operand((*s)[*axis]));
    const Elements* e = elements_known ? ctx.input_elements(i) : nullptr;
    if (e == nullptr || s->size() != 1)
      elements_known = false;
    else
      joined.insert(joined.end(), e->begin(), e->end());
  }
  if (!out) return ctx.Unknown("no inputs");
  (*out)[*axis] = ctx.symbols().Lower(std::move(total));
  ctx.SetOutput(0, dtype, *out);
  if (elements_known) ctx.SetOutputElements(0, std::move(joined));
  return Status::Ok();
}

Status Concat(NodeContext& ctx) {
  DataType dtype = DataType::kUndefined;
  for (size_t i = 0; i < ctx.num_inputs() && dtype == DataType::kUndefined; ++i) {
    dtype = ctx.input_dtype(i);
  }
  return ConcatOf(ctx, 0, 1, dtype, true);
}

// com.microsoft QLinearConcat: Y_scale, Y_zero_point, then (X, scale, zero
// point) per operand; Y has the operands' dtype.
Status QLinearConcat(NodeContext& ctx) {
  return ConcatOf(ctx, 2, 3, ctx.input_dtype(2), false);
}

Status Split(NodeContext& ctx) {
  for (size_t i = 0; i < ctx.num_outputs(); ++i) ctx.SetOutputDtype(i, ctx.input_dtype(0));
  const Shape* data = ctx.input_shape(0);
  if (data == nullptr) return ctx.Unknown("input 0 has unknown rank");
  auto axis = ctx.Axis(ctx.Int("axis", 0), data->size());
  if (!axis) return ctx.ModelError("axis out of range for " + ctx.ShapeText(*data));
  const Dim whole = (*data)[*axis];
  const size_t n = ctx.num_outputs();
  if (const int64_t parts = ctx.Int("num_outputs", 0);
      parts != 0 && parts != static_cast<int64_t>(n)) {
    return ctx.ModelError("num_outputs is " + std::to_string(parts) + " but the node has " +
                          std::to_string(n) + " outputs");
  }
  std::vector<Dim> parts;
  std::optional<std::vector<int64_t>> sizes = ctx.Ints("split");
  if (!sizes && ctx.has_input(1)) {
    sizes = ctx.input_ints(1);
    if (!sizes) return ctx.Unknown("split sizes are not constant");
  }
  if (sizes && !sizes->empty()) {
    if (sizes->size() != n) return ctx.ModelError("split sizes do not match the output count");
    int64_t sum = 0;
    for (int64_t v : *sizes) {
      parts.push_back(Dim::Static(v));
      sum += v;
    }
    if (whole.is_static() && whole.extent() != sum) {
      return ctx.ModelError("split sizes add up to " + std::to_string(sum) + ", not " +
                            std::to_string(whole.extent()));
    }
  } else if (whole.is_static()) {
    const int64_t total = whole.extent();
    const auto count = static_cast<int64_t>(n);
    const int64_t chunk = (total + count - 1) / count;
    if (total % count != 0 && !ctx.attr("num_outputs")) {
      return ctx.ModelError("extent " + std::to_string(total) + " does not split evenly");
    }
    for (int64_t i = 0; i < count; ++i) {
      parts.push_back(Dim::Static(std::clamp<int64_t>(total - i * chunk, 0, chunk)));
    }
  } else {
    const Dim count = Dim::Static(static_cast<int64_t>(n));
    std::optional<Dim> each = ExactQuotient(ctx.symbols(), std::span<const Dim>(&whole, 1),
                                            std::span<const Dim>(&count, 1));
    parts.assign(n, each ? *each : ctx.symbols().Mint("split"));
  }
  int64_t offset = 0;
  const Elements* e = ctx.input_elements(0);
  for (size_t i = 0; i < n; ++i) {
    Shape s = *data;
    s[*axis] = parts[i];
    ctx.SetOutput(i, ctx.input_dtype(0), s);
    if (e != nullptr && data->size() == 1 && parts[i].is_static()) {
      const int64_t len = parts[i].extent();
      if (offset + len <= static_cast<int64_t>(e->size())) {
        ctx.SetOutputElements(i, Elements(e->begin() + offset, e->begin() + offset + len));
      }
      offset += len;
    }
  }
  return Status::Ok();
}

struct SliceRange {
  int64_t start, end, step;
};

// Clamped [start, end) with step over a static extent, as ONNX defines it.
void ClampSlice(SliceRange& r, int64_t extent) {
  if (r.start < 0) r.start += extent;
  if (r.end < 0) r.end += extent;
  if (r.step > 0) {
    r.start = std::clamp<int64_t>(r.start, 0, extent);
    r.end = std::clamp<int64_t>(r.end, 0, extent);
  } else {
    r.start = std::clamp<int64_t>(r.start, 0, extent - 1);
    r.end = std::clamp<int64_t>(r.end, -1, extent - 1);
  }
}

int64_t SliceLength(const SliceRange& r) {
  if (r.step > 0) return r.end > r.start ? (r.end - r.start + r.step - 1) / r.step : 0;
  return r.start > r.end ? (r.start - r.end - r.step - 1) / -r.step : 0;
}

// The length of slicing a symbolic extent; minted when no closed form is known.
Dim SymbolicSliceLength(NodeContext& ctx, Dim extent, Dim start, Dim end, int64_t step) {
  SymbolInterner& s = ctx.symbols();
  constexpr int64_t kToEnd = std::numeric_limits<int32_t>::max();
  const bool to_end = end.is_static() && end.extent() >= kToEnd;
  if (step != 1) return s.Mint("slice");
  if (start.is_static() && start.extent() >= 0) {
    if (to_end) return s.AsExtent(s.Sub(extent, start));
    if (start.extent() == 0 && (end.is_symbolic() || end.extent() >= 0)) return s.Min(extent, end);
  }
  if (start.is_static() && start.extent() < 0 && to_end) {
    return s.Min(extent, Dim::Static(-start.extent()));
  }
  if (start.is_symbolic() && to_end) return s.AsExtent(s.Sub(extent, start));
  return s.Mint("slice");
}

Status Slice(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* data = ctx.input_shape(0);
  if (data == nullptr) return ctx.Unknown("input 0 has unknown rank");
  const size_t rank = data->size();
  std::optional<Elements> starts, ends;
  std::optional<std::vector<int64_t>> axes, steps;
  auto as_elements = [](const std::vector<int64_t>& v) {
    Elements e;
    for (int64_t x : v) e.push_back(Dim::Static(x));
    return e;
  };
  if (ctx.opset() < 10) {
    if (auto v = ctx.Ints("starts")) starts = as_elements(*v);
    if (auto v = ctx.Ints("ends")) ends = as_elements(*v);
    axes = ctx.Ints("axes");
  } else {
    if (const Elements* e = ctx.input_elements(1)) starts = *e;
    if (const Elements* e = ctx.input_elements(2)) ends = *e;
    if (ctx.has_input(3)) axes = ctx.input_ints(3);
    if (ctx.has_input(4)) steps = ctx.input_ints(4);
    if ((ctx.has_input(3) && !axes) || (ctx.has_input(4) && !steps)) {
      Shape out;
      for (size_t i = 0; i < rank; ++i) out.push_back(ctx.symbols().Mint("slice"));
      ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
      return Status::Ok();
    }
  }
  const Shape* start_shape = ctx.input_shape(1);
  size_t count = starts ? starts->size()
                        : (start_shape && start_shape->size() == 1 && (*start_shape)[0].is_static()
                               ? static_cast<size_t>((*start_shape)[0].extent())
                               : rank);
  if (!axes || axes->empty()) {
    axes = std::vector<int64_t>();
    for (size_t i = 0; i < count; ++i) axes->push_back(static_cast<int64_t>(i));
  }
  if (!steps || steps->empty()) steps = std::vector<int64_t>(axes->size(), 1);
  Shape out = *data;
  std::vector<std::optional<SliceRange>> static_ranges(rank);
  for (size_t k = 0; k < axes->size(); ++k) {
    auto axis = ctx.Axis((*axes)[k], rank);
    if (!axis) return ctx.ModelError("slice axis out of range for " + ctx.ShapeText(*data));
    const int64_t step = (*steps)[k];
    if (step == 0) return ctx.ModelError("slice step is zero");
    std::optional<Dim> start = starts && k < starts->size() ? (*starts)[k] : std::nullopt;
    std::optional<Dim> end = ends && k < ends->size() ? (*ends)[k] : std::nullopt;
    Dim& d = out[*axis];
    if (!start || !end) {
      d = ctx.symbols().Mint("slice");
    } else if (d.is_static() && start->is_static() && end->is_static()) {
      SliceRange r{start->extent(), end->extent(), step};
      ClampSlice(r, d.extent());
      static_ranges[*axis] = r;
      d = Dim::Static(SliceLength(r));
    } else if (d.is_symbolic()) {
      d = SymbolicSliceLength(ctx, d, *start, *end, step);
    } else {
      d = ctx.symbols().Mint("slice");
    }
  }
  ctx.SetOutput(0, ctx.input_dtype(0), out);
  const Elements* e = ctx.input_elements(0);
  if (e != nullptr && rank == 1 && out[0].is_static() && (*data)[0].is_static() &&
      static_cast<size_t>((*data)[0].extent()) == e->size()) {
    SliceRange r = static_ranges[0].value_or(SliceRange{0, static_cast<int64_t>(e->size()), 1});
    Elements picked;
    for (int64_t i = 0, pos = r.start; i < out[0].extent(); ++i, pos += r.step) {
      picked.push_back((*e)[static_cast<size_t>(pos)]);
    }
    ctx.SetOutputElements(0, std::move(picked));
  }
  return Status::Ok();
}

Status Gather(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* data = ctx.input_shape(0);
  const Shape* indices = ctx.input_shape(1);
  if (data == nullptr || indices == nullptr) return ctx.Unknown("an input has unknown rank");
  auto axis = ctx.Axis(ctx.Int("axis", 0), data->size());
  if (!axis) return ctx.ModelError("axis out of range for " + ctx.ShapeText(*data));
  Shape out(data->begin(), data->begin() + *axis);
  out.insert(out.end(), indices->begin(), indices->end());
  out.insert(out.end(), data->begin() + *axis + 1, data->end());
  ctx.SetOutput(0, ctx.input_dtype(0), out);
  const Elements* e = ctx.input_elements(0);
  std::optional<std::vector<int64_t>> picks = ctx.input_ints(1);
  if (e != nullptr && picks && data->size() == 1) {
    Elements picked;
    const auto n = static_cast<int64_t>(e->size());
    for (int64_t i : *picks) {
      if (i < -n || i >= n) return ctx.ModelError("index " + std::to_string(i) + " out of range");
      picked.push_back((*e)[static_cast<size_t>(i < 0 ? i + n : i)]);
    }
    ctx.SetOutputElements(0, std::move(picked));
  }
  return Status::Ok();
}

Status GatherElements(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* indices = ctx.input_shape(1);
  if (indices == nullptr) return ctx.Unknown("indices have unknown rank");
  ctx.SetOutput(0, ctx.input_dtype(0), *indices);
  return Status::Ok();
}

Status GatherND(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* data = ctx.input_shape(0);
  const Shape* indices = ctx.input_shape(1);
  if (data == nullptr || indices == nullptr || indices->empty()) {
    return ctx.Unknown("an input has unknown rank");
  }
  const Dim last = indices->back();
  if (!last.is_static()) return ctx.Unknown("index depth is symbolic");
  const auto batch = static_cast<size_t>(ctx.Int("batch_dims", 0));
  const size_t depth = batch + static_cast<size_t>(last.extent());
  if (depth > data->size()) return ctx.ModelError("index depth exceeds the data rank");
  Shape out(indices->begin(), indices->end() - 1);
  out.insert(out.end(), data->begin() + depth, data->end());
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

Status OneHot(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(2));
  const Shape* indices = ctx.input_shape(0);
  if (indices == nullptr) return ctx.Unknown("indices have unknown rank");
  auto axis = ctx.Axis(ctx.Int("axis", -1), indices->size() + 1);
  if (!axis) return ctx.ModelError("axis out of range");
  Dim depth = ctx.symbols().Mint("onehot");
  if (const Elements* e = ctx.input_elements(1); e != nullptr && e->size() == 1 && (*e)[0]) {
    depth = ctx.symbols().AsExtent(*(*e)[0]);
  } else if (const TensorData* t = ctx.input_constant(1)) {
    // A floating depth counts its whole part.
    auto v = NumbersOfTensor(*t, 1);
    if (v && v->size() == 1)
      depth = ctx.symbols().AsExtent(Dim::Static(static_cast<int64_t>((*v)[0])));
  }
  Shape out = *indices;
  out.insert(out.begin() + *axis, depth);
  ctx.SetOutput(0, ctx.input_dtype(2), std::move(out));
  return Status::Ok();
}

}  // namespace

void AddIndexingRules(RuleTable& t) {
  t.Add("", "Concat", Concat);
  t.Add("com.microsoft", "QLinearConcat", QLinearConcat);
  t.Add("", "Split", Split);
  t.Add("", "Slice", Slice);
  t.Add("", "Gather", Gather);
  t.Add("", "GatherElements", GatherElements);
  t.Add("", "GatherND", GatherND);
  t.Add("", "OneHot", OneHot);
}

}  // namespace nxrt::graph::inference
