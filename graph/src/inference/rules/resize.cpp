// Resize and Upsample. Output extents come from the sizes input (optionally
// on a subset of axes, with an aspect-ratio policy) or from floor(in * scale);
// a symbolic extent scaled by a whole number stays a derived product, any
// other unknowable extent is minted.
#include <cmath>
#include <vector>

#include "inference/rule_registry.hpp"

namespace nxrt::graph::inference {
namespace {

// An extent past int64 (or from a NaN scale) is left to the kernel, which
// refuses it by name at run time.
constexpr double kTwoToThe63 = 9223372036854775808.0;

Dim Scaled(NodeContext& ctx, Dim in, double scale) {
  if (in.is_static()) {
    const double out = std::floor(static_cast<double>(in.extent()) * scale);
    if (out >= 0 && out < kTwoToThe63) return Dim::Static(static_cast<int64_t>(out));
    return ctx.symbols().Mint("resize");
  }
  const double whole = std::round(scale);
  if (whole >= 1 && whole < kTwoToThe63 && std::abs(whole - scale) < 1e-9) {
    return ctx.symbols().Mul(in, Dim::Static(static_cast<int64_t>(whole)));
  }
  return ctx.symbols().Mint("resize");
}

Status Resize(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* x = ctx.input_shape(0);
  if (x == nullptr) return ctx.Unknown("input 0 has unknown rank");
  const size_t rank = x->size();
  std::vector<size_t> axes;
  if (auto a = ctx.Ints("axes"); a && !a->empty()) {
    for (int64_t v : *a) {
      auto axis = ctx.Axis(v, rank);
      if (!axis) return ctx.ModelError("resize axis out of range");
      axes.push_back(static_cast<size_t>(*axis));
    }
  } else {
    for (size_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  const bool upsample = ctx.node().op_type == "Upsample";
  const size_t scales_input = upsample || ctx.opset() < 11 ? 1 : 2;
  Shape out = *x;
  const Elements* sizes = upsample ? nullptr : ctx.input_elements(3);
  if (sizes != nullptr && sizes->size() == axes.size() && !sizes->empty()) {
    const std::string policy = ctx.String("keep_aspect_ratio_policy", "stretch");
    if (policy == "stretch") {
      for (size_t k = 0; k < axes.size(); ++k) {
        out[axes[k]] =
            (*sizes)[k] ? ctx.symbols().AsExtent(*(*sizes)[k]) : ctx.symbols().Mint("resize");
      }
    } else {
      std::optional<double> scale;
      for (size_t k = 0; k < axes.size(); ++k) {
        const auto& want = (*sizes)[k];
        const Dim have = (*x)[axes[k]];
        if (!want || !want->is_static() || !have.is_static() || have.extent() == 0) {
          scale.reset();
          break;
        }
        const double s = static_cast<double>(want->extent()) / static_cast<double>(have.extent());
        scale = !scale ? s : (policy == "not_larger" ? std::min(*scale, s) : std::max(*scale, s));
      }
      for (size_t k = 0; k < axes.size(); ++k) {
        const Dim have = (*x)[axes[k]];
        out[axes[k]] = scale && have.is_static()
                           ? Dim::Static(static_cast<int64_t>(
                                 std::round(*scale * static_cast<double>(have.extent()))))
                           : ctx.symbols().Mint("resize");
      }
    }
    ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
    return Status::Ok();
  }
  std::optional<std::vector<double>> scales;
  if (upsample && ctx.opset() < 9) {
    if (const Attribute* a = ctx.attr("scales"))
      scales = std::vector<double>(a->floats.begin(), a->floats.end());
  } else if (const TensorData* t = ctx.input_constant(scales_input)) {
    scales = NumbersOfTensor(*t, ctx.options().max_tracked_elements);
  }
  if (!scales || scales->size() != axes.size()) {
    if (ctx.has_input(scales_input) || ctx.has_input(3)) {
      for (size_t axis : axes) out[axis] = ctx.symbols().Mint("resize");
      ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
      return Status::Ok();
    }
    return ctx.Unknown("neither scales nor sizes are known");
  }
  for (size_t k = 0; k < axes.size(); ++k) out[axes[k]] = Scaled(ctx, (*x)[axes[k]], (*scales)[k]);
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

// GridSample: [N, C] of the input followed by the grid's spatial dims.
Status GridSample(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* x = ctx.input_shape(0);
  const Shape* grid = ctx.input_shape(1);
  if (x == nullptr || grid == nullptr || x->size() < 2 || grid->size() < 2) {
    return ctx.Unknown("input or grid rank unknown");
  }
  Shape out{(*x)[0], (*x)[1]};
  out.insert(out.end(), grid->begin() + 1, grid->end() - 1);
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

// CenterCropPad: the input with the listed axes set to the requested extents.
Status CenterCropPad(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* x = ctx.input_shape(0);
  if (x == nullptr) return ctx.Unknown("input 0 has unknown rank");
  std::optional<std::vector<Dim>> extents = ctx.input_dims_or_mint(1, "crop");
  if (!extents) return ctx.Unknown("the requested shape's length is unknown");
  std::vector<int64_t> axes = ctx.Ints("axes").value_or(std::vector<int64_t>{});
  if (axes.empty()) {
    for (size_t i = 0; i < x->size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (axes.size() != extents->size()) return ctx.ModelError("shape and axes differ in length");
  Shape out = *x;
  for (size_t k = 0; k < axes.size(); ++k) {
    auto axis = ctx.Axis(axes[k], x->size());
    if (!axis) return ctx.ModelError("crop axis out of range");
    out[*axis] = ctx.symbols().AsExtent((*extents)[k]);
  }
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

// AffineGrid: theta [N, r, r+1] and size [N, C, spatial...] give
// [N, spatial..., r].
Status AffineGrid(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  std::optional<std::vector<Dim>> size = ctx.input_dims_or_mint(1, "grid");
  if (!size || size->size() < 3) return ctx.Unknown("size is unknown");
  Shape out{(*size)[0]};
  out.insert(out.end(), size->begin() + 2, size->end());
  out.push_back(Dim::Static(static_cast<int64_t>(size->size() - 2)));
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

}  // namespace

void AddResizeRules(RuleTable& t) {
  t.Add("", "CenterCropPad", CenterCropPad);
  t.Add("", "AffineGrid", AffineGrid);
  t.Add("", "Resize", Resize);
  t.Add("", "Upsample", Resize);
  t.Add("", "GridSample", GridSample);
}

}  // namespace nxrt::graph::inference
