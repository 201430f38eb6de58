// Ops that rearrange a tensor without reading its values: Reshape, Flatten,
// Squeeze, Unsqueeze, Transpose, Expand, Tile, Pad, DepthToSpace and
// SpaceToDepth. Products and quotients of extents go through the Lower
// chokepoint (via dim_algebra), so a Reshape([-1]) of [.., seq_kv, 8] yields
// the derived symbol seq_kv*8 with its derivation records.
#include <algorithm>
#include <vector>

#include "inference/dim_algebra.hpp"
#include "inference/element_propagation.hpp"
#include "inference/rule_registry.hpp"
#include "nxrt/support/checked_math.hpp"

namespace nxrt::graph::inference {
namespace {

// Output 0 takes input 0's elements unchanged (same flat order).
void ForwardElements(NodeContext& ctx) {
  if (const Elements* e = ctx.input_elements(0)) ctx.SetOutputElements(0, *e);
}

Status Reshape(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  std::optional<std::vector<Dim>> target = ctx.input_dims_or_mint(1, "reshape");
  if (!target) return ctx.Unknown("the target shape's length is not known");
  const Shape* data = ctx.input_shape(0);
  const bool allow_zero = ctx.Int("allowzero", 0) != 0;
  Shape out;
  std::optional<size_t> inferred;
  for (size_t i = 0; i < target->size(); ++i) {
    Dim d = (*target)[i];
    if (d.is_static() && d.extent() == 0 && !allow_zero) {
      if (data == nullptr) return ctx.Unknown("a copied extent comes from an unknown shape");
      if (i >= data->size()) return ctx.ModelError("target copies a dim the input lacks");
      d = (*data)[i];
    } else if (d.is_static() && d.extent() == -1) {
      if (inferred) return ctx.ModelError("target shape has more than one -1");
      inferred = i;
    } else if (d.is_static() && d.extent() < 0) {
      return ctx.ModelError("target shape has a negative extent " + std::to_string(d.extent()));
    }
    out.push_back(d);
  }
  auto describe = [&] {
    return (data ? ctx.ShapeText(*data) : std::string("?")) + " to " + ctx.ShapeText(out);
  };
  if (inferred) {
    if (data == nullptr) {
      out[*inferred] = ctx.symbols().Mint("reshape");
    } else {
      std::vector<Dim> known;
      for (size_t i = 0; i < out.size(); ++i) {
        if (i != *inferred) known.push_back(out[i]);
      }
      std::optional<Dim> q = ExactQuotient(ctx.symbols(), *data, known);
      if (!q) return ctx.ModelError("cannot reshape " + describe() + ": sizes do not divide");
      out[*inferred] = *q;
    }
  } else if (data != nullptr) {
    size_t in_count = 0, out_count = 0;
    if (StaticCount(*data, in_count) && StaticCount(out, out_count) && in_count != out_count) {
      return ctx.ModelError("cannot reshape " + describe() + ": element counts differ");
    }
  }
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  ForwardElements(ctx);
  return Status::Ok();
}

Status Flatten(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* data = ctx.input_shape(0);
  if (data == nullptr) return ctx.Unknown("input 0 has unknown rank");
  const auto rank = static_cast<int64_t>(data->size());
  int64_t axis = ctx.Int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank)
    return ctx.ModelError("axis out of range for " + ctx.ShapeText(*data));
  std::span<const Dim> all(*data);
  Dim outer = Product(ctx.symbols(), all.subspan(0, static_cast<size_t>(axis)));
  Dim inner = Product(ctx.symbols(), all.subspan(static_cast<size_t>(axis)));
  ctx.SetOutput(0, ctx.input_dtype(0), {outer, inner});
  ForwardElements(ctx);
  return Status::Ok();
}

// Axes from the attribute (older opsets) or from input `index`.
std::optional<std::vector<int64_t>> AxesOf(NodeContext& ctx, size_t index) {
  if (auto attr = ctx.Ints("axes")) return attr;
  if (ctx.has_input(index)) return ctx.input_ints(index);
  return std::vector<int64_t>{};
}

Status Squeeze(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* data = ctx.input_shape(0);
  if (data == nullptr) return ctx.Unknown("input 0 has unknown rank");
  auto axes = AxesOf(ctx, 1);
  if (!axes) return ctx.Unknown("axes are not constant");
  std::vector<bool> drop(data->size(), false);
  if (axes->empty()) {
    for (size_t i = 0; i < data->size(); ++i) {
      if ((*data)[i].is_symbolic()) return ctx.Unknown("cannot tell which symbolic dims are 1");
      drop[i] = (*data)[i].extent() == 1;
    }
  }
  for (int64_t a : *axes) {
    auto axis = ctx.Axis(a, data->size());
    if (!axis) return ctx.ModelError("axis out of range for " + ctx.ShapeText(*data));
    Dim d = (*data)[*axis];
    if (d.is_static() && d.extent() != 1) {
      return ctx.ModelError("cannot squeeze extent " + std::to_string(d.extent()) + " of " +
                            ctx.ShapeText(*data));
    }
    drop[*axis] = true;
  }
  Shape out;
  for (size_t i = 0; i < data->size(); ++i) {
    if (!drop[i]) out.push_back((*data)[i]);
  }
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  ForwardElements(ctx);
  return Status::Ok();
}

Status Unsqueeze(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* data = ctx.input_shape(0);
  if (data == nullptr) return ctx.Unknown("input 0 has unknown rank");
  auto axes = AxesOf(ctx, 1);
  if (!axes) return ctx.Unknown("axes are not constant");
  const size_t rank = data->size() + axes->size();
  std::vector<bool> inserted(rank, false);
  for (int64_t a : *axes) {
    auto axis = ctx.Axis(a, rank);
    if (!axis || inserted[*axis]) return ctx.ModelError("bad or repeated unsqueeze axis");
    inserted[*axis] = true;
  }
  Shape out;
  size_t next = 0;
  for (size_t i = 0; i < rank; ++i) out.push_back(inserted[i] ? Dim::Static(1) : (*data)[next++]);
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  ForwardElements(ctx);
  return Status::Ok();
}

Status Transpose(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* data = ctx.input_shape(0);
  if (data == nullptr) return ctx.Unknown("input 0 has unknown rank");
  std::vector<int64_t> perm;
  if (auto p = ctx.Ints("perm"); p && !p->empty()) {
    perm = *p;
  } else {
    for (size_t i = data->size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  }
  if (perm.size() != data->size()) return ctx.ModelError("perm does not match the input rank");
  Shape out;
  for (int64_t p : perm) {
    auto axis = ctx.Axis(p, data->size());
    if (!axis) return ctx.ModelError("perm entry out of range");
    out.push_back((*data)[*axis]);
  }
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  if (data->size() <= 1) ForwardElements(ctx);
  return Status::Ok();
}

Status Expand(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* data = ctx.input_shape(0);
  std::optional<std::vector<Dim>> target = ctx.input_dims_or_mint(1, "expand");
  if (data == nullptr || !target) return ctx.Unknown("input or target shape unknown");
  NXRT_ASSIGN_OR_RETURN(Shape out,
                        ctx.BroadcastShapes(*data, Shape(target->begin(), target->end())));
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

Status Tile(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* data = ctx.input_shape(0);
  if (data == nullptr) return ctx.Unknown("input 0 has unknown rank");
  const Elements* repeats = ctx.input_elements(1);
  Shape out;
  for (size_t i = 0; i < data->size(); ++i) {
    if (repeats != nullptr && repeats->size() != data->size()) {
      return ctx.ModelError("repeats length differs from the input rank");
    }
    if (repeats != nullptr && (*repeats)[i]) {
      const Dim extent = (*data)[i];
      const Dim times = *(*repeats)[i];
      if (extent.is_static() && times.is_static() && !CheckedMul(extent.extent(), times.extent())) {
        return ctx.ModelError("repeating extent " + std::to_string(extent.extent()) + " " +
                              std::to_string(times.extent()) +
                              " times overflows int64; fix the repeats");
      }
      out.push_back(ctx.symbols().AsExtent(ctx.symbols().Mul(extent, times)));
    } else {
      out.push_back(ctx.symbols().Mint("tile"));
    }
  }
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

Status Pad(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* data = ctx.input_shape(0);
  if (data == nullptr) return ctx.Unknown("input 0 has unknown rank");
  const size_t rank = data->size();
  std::vector<size_t> axes;
  if (auto axes_in = ctx.has_input(3) ? ctx.input_ints(3) : std::vector<int64_t>{}) {
    for (int64_t a : *axes_in) {
      auto axis = ctx.Axis(a, rank);
      if (!axis) return ctx.ModelError("pad axis out of range");
      axes.push_back(static_cast<size_t>(*axis));
    }
  } else {
    return ctx.Unknown("pad axes are not constant");
  }
  if (axes.empty()) {
    for (size_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  const Elements* pads = ctx.input_elements(1);
  std::optional<std::vector<int64_t>> pad_attr = ctx.Ints("pads");
  Shape out = *data;
  for (size_t k = 0; k < axes.size(); ++k) {
    std::optional<Dim> before, after;
    if (pad_attr && pad_attr->size() == 2 * axes.size()) {
      before = Dim::Static((*pad_attr)[k]);
      after = Dim::Static((*pad_attr)[k + axes.size()]);
    } else if (pads != nullptr && pads->size() == 2 * axes.size()) {
      before = (*pads)[k];
      after = (*pads)[k + axes.size()];
    }
    Dim& d = out[axes[k]];
    if (!before || !after) {
      d = ctx.symbols().Mint("pad");
      continue;
    }
    d = ctx.symbols().AsExtent(
        ctx.symbols().Lower({SymbolExpr::Op::kAdd,
                             {SymbolInterner::Operand(d), SymbolInterner::Operand(*before),
                              SymbolInterner::Operand(*after)}}));
  }
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

Status DepthToSpace(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* data = ctx.input_shape(0);
  if (data == nullptr || data->size() != 4) return ctx.Unknown("input 0 is not rank 4");
  const int64_t blocksize = ctx.Int("blocksize", 1);
  // Squared, it must still be an extent.
  if (blocksize <= 0 || blocksize > 3037000499) {
    return ctx.ModelError("blocksize " + std::to_string(blocksize) +
                          " is not a positive extent whose square fits in 64 bits");
  }
  const Dim block = Dim::Static(blocksize);
  SymbolInterner& s = ctx.symbols();
  const Dim square = s.Mul(block, block);
  Shape out;
  if (ctx.node().op_type == "DepthToSpace") {
    std::optional<Dim> channels =
        ExactQuotient(s, std::span<const Dim>(&(*data)[1], 1), std::span<const Dim>(&square, 1));
    if (!channels) return ctx.ModelError("channels of " + ctx.ShapeText(*data) + " not divisible");
    out = {(*data)[0], *channels, s.Mul((*data)[2], block), s.Mul((*data)[3], block)};
  } else {
    auto h =
        ExactQuotient(s, std::span<const Dim>(&(*data)[2], 1), std::span<const Dim>(&block, 1));
    auto w =
        ExactQuotient(s, std::span<const Dim>(&(*data)[3], 1), std::span<const Dim>(&block, 1));
    if (!h || !w)
      return ctx.ModelError("spatial dims of " + ctx.ShapeText(*data) + " not divisible");
    out = {(*data)[0], s.Mul((*data)[1], square), *h, *w};
  }
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

}  // namespace

void AddReshapeRules(RuleTable& t) {
  t.Add("", "Reshape", Reshape);
  t.Add("", "Flatten", Flatten);
  t.Add("", "Squeeze", Squeeze);
  t.Add("", "Unsqueeze", Unsqueeze);
  t.Add("", "Transpose", Transpose);
  t.Add("", "Expand", Expand);
  t.Add("", "Tile", Tile);
  t.Add("", "Pad", Pad);
  t.Add("", "DepthToSpace", DepthToSpace);
  t.Add("", "SpaceToDepth", DepthToSpace);
}

}  // namespace nxrt::graph::inference
