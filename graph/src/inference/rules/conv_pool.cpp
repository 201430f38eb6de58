// Convolutions and pooling: Conv, ConvInteger, QLinearConv, ConvTranspose,
// AveragePool, MaxPool, LpPool, the global pools and MaxUnpool. A symbolic
// spatial extent becomes the derived expression (in + pads - span) / stride + 1.
#include <limits>
#include <string>
#include <vector>

#include "inference/dim_algebra.hpp"
#include "inference/rule_registry.hpp"

namespace nxrt::graph::inference {
namespace {

struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;
  std::string auto_pad;
  bool ceil_mode = false;
};

// A per-axis attribute: `n` values, or `fill` for each when it is absent.
Result<std::vector<int64_t>> WindowInts(NodeContext& ctx, const char* name, size_t n,
                                        int64_t fill) {
  std::optional<std::vector<int64_t>> v = ctx.Ints(name);
  if (!v) return std::vector<int64_t>(n, fill);
  if (v->size() != n) {
    return ctx.ModelError(std::string(name) + " has " + std::to_string(v->size()) +
                          " values where the window needs " + std::to_string(n) + "; fix it");
  }
  return *std::move(v);
}

// The window attributes of a kernel over `spatial_rank` axes, refused where
// the specification forbids them: the extents below divide by the strides
// and multiply kernels by dilations.
Result<Window> ReadWindow(NodeContext& ctx, std::vector<int64_t> kernel, size_t spatial_rank) {
  const size_t n = kernel.size();
  if (n != spatial_rank) return ctx.ModelError("kernel rank does not match the input");
  Window w;
  w.kernel = std::move(kernel);
  NXRT_ASSIGN_OR_RETURN(w.strides, WindowInts(ctx, "strides", n, 1));
  NXRT_ASSIGN_OR_RETURN(w.dilations, WindowInts(ctx, "dilations", n, 1));
  NXRT_ASSIGN_OR_RETURN(w.pads, WindowInts(ctx, "pads", 2 * n, 0));
  w.auto_pad = ctx.String("auto_pad", "NOTSET");
  w.ceil_mode = ctx.Int("ceil_mode", 0) != 0;
  for (size_t i = 0; i < n; ++i) {
    if (w.kernel[i] < 1) return ctx.ModelError("kernel extents must be positive; fix kernel_shape");
    if (w.strides[i] < 1) return ctx.ModelError("strides must be positive; fix the strides");
    if (w.dilations[i] < 1) return ctx.ModelError("dilations must be positive; fix the dilations");
    if (w.kernel[i] - 1 > (std::numeric_limits<int64_t>::max() - 1) / w.dilations[i]) {
      return ctx.ModelError(
          "the dilated kernel's extent overflows 64 bits; fix kernel_shape or the dilations");
    }
  }
  for (int64_t pad : w.pads) {
    if (pad < 0) return ctx.ModelError("pads must not be negative; fix the pads");
  }
  return w;
}

Dim OutputExtent(NodeContext& ctx, const Window& w, size_t i, Dim in) {
  SymbolInterner& s = ctx.symbols();
  const int64_t span = (w.kernel[i] - 1) * w.dilations[i] + 1;
  const Dim stride = Dim::Static(w.strides[i]);
  if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") return s.CeilDiv(in, stride);
  const int64_t pads = w.auto_pad == "VALID" ? 0 : w.pads[i] + w.pads[i + w.kernel.size()];
  const Dim room = s.AsExtent(s.Add(in, Dim::Static(pads - span)));
  if (room.is_static() && w.ceil_mode && in.is_static()) {
    int64_t out = (room.extent() + w.strides[i] - 1) / w.strides[i] + 1;
    // The last window must start inside the input or the leading padding.
    if ((out - 1) * w.strides[i] >= in.extent() + w.pads[i]) --out;
    return Dim::Static(out);
  }
  const Dim steps = w.ceil_mode ? s.CeilDiv(room, stride) : s.FloorDiv(room, stride);
  return s.Add(steps, Dim::Static(1));
}

Status Windowed(NodeContext& ctx, size_t x_index, DataType dtype, Dim channels,
                std::vector<int64_t> kernel) {
  const Shape& x = *ctx.input_shape(x_index);
  NXRT_ASSIGN_OR_RETURN(Window w, ReadWindow(ctx, std::move(kernel), x.size() - 2));
  Shape out{x[0], channels};
  for (size_t i = 0; i < w.kernel.size(); ++i) out.push_back(OutputExtent(ctx, w, i, x[i + 2]));
  ctx.SetOutput(0, dtype, out);
  return Status::Ok();
}

// A convolution's input and weight share one rank of at least 3 ([N, C,
// spatial...] and [M, C/group, kernel...]). libonnx's own rules index the
// weight by the input's rank, so a mismatch must stop here.
Status CheckConvolutionRanks(NodeContext& ctx, const Shape& x, const Shape& weight) {
  if (x.size() >= 3 && weight.size() == x.size()) return Status::Ok();
  return ctx.ModelError("input " + ctx.ShapeText(x) + " and weight " + ctx.ShapeText(weight) +
                        " need one rank of at least 3");
}

Status ConvFamily(NodeContext& ctx, size_t x_index, size_t w_index, DataType dtype) {
  ctx.SetOutputDtype(0, dtype);
  const Shape* x = ctx.input_shape(x_index);
  const Shape* weight = ctx.input_shape(w_index);
  if (x == nullptr || weight == nullptr) return ctx.Unknown("input or weight has unknown rank");
  NXRT_RETURN_IF_ERROR(CheckConvolutionRanks(ctx, *x, *weight));
  std::vector<int64_t> kernel;
  if (auto k = ctx.Ints("kernel_shape")) {
    kernel = *k;
  } else {
    for (size_t i = 2; i < weight->size(); ++i) {
      if (!(*weight)[i].is_static()) return ctx.Unknown("kernel extent is symbolic");
      kernel.push_back((*weight)[i].extent());
    }
  }
  return Windowed(ctx, x_index, dtype, (*weight)[0], std::move(kernel));
}

Status Conv(NodeContext& ctx) {
  return ConvFamily(ctx, 0, 1, ctx.input_dtype(0));
}
Status ConvInteger(NodeContext& ctx) {
  return ConvFamily(ctx, 0, 1, DataType::kInt32);
}
Status QLinearConv(NodeContext& ctx) {
  return ConvFamily(ctx, 0, 3, ctx.input_dtype(7));
}

Status Pool(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  ctx.SetOutputDtype(1, DataType::kInt64);
  const Shape* x = ctx.input_shape(0);
  auto kernel = ctx.Ints("kernel_shape");
  if (x == nullptr || !kernel || x->size() < 2) return ctx.Unknown("input rank or kernel unknown");
  NXRT_RETURN_IF_ERROR(Windowed(ctx, 0, ctx.input_dtype(0), (*x)[1], *kernel));
  if (ctx.has_output(1)) ctx.SetOutput(1, DataType::kInt64, *ctx.output(0)->shape);
  return Status::Ok();
}

Status GlobalPool(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* x = ctx.input_shape(0);
  if (x == nullptr || x->size() < 2) return ctx.Unknown("input 0 has unknown rank");
  Shape out{(*x)[0], (*x)[1]};
  out.resize(x->size(), Dim::Static(1));
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

// com.microsoft QLinearGlobalAveragePool: one value per channel, the
// channels second or, with channels_last, last.
Status QLinearGlobalAveragePool(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* x = ctx.input_shape(0);
  if (x == nullptr || x->size() < 3) return ctx.Unknown("input 0 has unknown rank");
  Shape out(x->size(), Dim::Static(1));
  out[0] = (*x)[0];
  const size_t channels = ctx.Int("channels_last", 0) != 0 ? x->size() - 1 : 1;
  out[channels] = (*x)[channels];
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

Status ConvTranspose(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* x = ctx.input_shape(0);
  const Shape* weight = ctx.input_shape(1);
  if (x == nullptr || weight == nullptr) return ctx.Unknown("input or weight has unknown rank");
  NXRT_RETURN_IF_ERROR(CheckConvolutionRanks(ctx, *x, *weight));
  const size_t n = x->size() - 2;
  std::vector<int64_t> kernel;
  if (auto k = ctx.Ints("kernel_shape")) {
    kernel = *k;
  } else {
    for (size_t i = 2; i < weight->size(); ++i) {
      if (!(*weight)[i].is_static()) return ctx.Unknown("kernel extent is symbolic");
      kernel.push_back((*weight)[i].extent());
    }
  }
  NXRT_ASSIGN_OR_RETURN(Window w, ReadWindow(ctx, kernel, n));
  NXRT_ASSIGN_OR_RETURN(const std::vector<int64_t> out_pad,
                        WindowInts(ctx, "output_padding", n, 0));
  SymbolInterner& s = ctx.symbols();
  Shape out{(*x)[0], s.Mul((*weight)[1], Dim::Static(ctx.Int("group", 1)))};
  auto output_shape = ctx.Ints("output_shape");
  for (size_t i = 0; i < n; ++i) {
    if (output_shape && output_shape->size() >= n) {
      out.push_back(Dim::Static((*output_shape)[output_shape->size() - n + i]));
      continue;
    }
    const Dim stride = Dim::Static(w.strides[i]);
    if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") {
      out.push_back(s.Mul((*x)[i + 2], stride));
      continue;
    }
    const int64_t span = (kernel[i] - 1) * w.dilations[i] + 1;
    const int64_t pads = w.auto_pad == "VALID" ? 0 : w.pads[i] + w.pads[i + n];
    Dim grown = s.Mul(s.Sub((*x)[i + 2], Dim::Static(1)), stride);
    out.push_back(s.AsExtent(s.Add(grown, Dim::Static(out_pad[i] + span - pads))));
  }
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

Status MaxUnpool(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* x = ctx.input_shape(0);
  if (x == nullptr || x->size() < 3) return ctx.Unknown("input 0 has unknown rank");
  if (ctx.has_input(2)) {
    auto dims = ctx.input_dims_or_mint(2, "unpool");
    if (!dims) return ctx.Unknown("output_shape's length is not known");
    ctx.SetOutput(0, ctx.input_dtype(0), Shape(dims->begin(), dims->end()));
    return Status::Ok();
  }
  auto kernel = ctx.Ints("kernel_shape");
  if (!kernel) return ctx.ModelError("MaxUnpool needs kernel_shape");
  NXRT_ASSIGN_OR_RETURN(Window w, ReadWindow(ctx, *kernel, x->size() - 2));
  SymbolInterner& s = ctx.symbols();
  Shape out{(*x)[0], (*x)[1]};
  for (size_t i = 0; i < kernel->size(); ++i) {
    Dim grown = s.Mul(s.Sub((*x)[i + 2], Dim::Static(1)), Dim::Static(w.strides[i]));
    const int64_t pads = w.pads[i] + w.pads[i + kernel->size()];
    out.push_back(s.AsExtent(s.Add(grown, Dim::Static((*kernel)[i] - pads))));
  }
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

// Col2Im: [N, C * prod(block), L] folds into [N, C, image_shape...].
Status Col2Im(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* x = ctx.input_shape(0);
  const Elements* image = ctx.input_elements(1);
  auto block = ctx.input_ints(2);
  if (x == nullptr || x->size() != 3 || image == nullptr || !block) {
    return ctx.Unknown("input, image_shape or block_shape unknown");
  }
  int64_t block_size = 1;
  for (int64_t b : *block) block_size *= b;
  const Dim divisor = Dim::Static(block_size);
  auto channels = ExactQuotient(ctx.symbols(), std::span<const Dim>(&(*x)[1], 1),
                                std::span<const Dim>(&divisor, 1));
  if (!channels) return ctx.ModelError("channels of " + ctx.ShapeText(*x) + " not divisible");
  Shape out{(*x)[0], *channels};
  for (const auto& d : *image) out.push_back(d ? *d : ctx.symbols().Mint("col2im"));
  ctx.SetOutput(0, ctx.input_dtype(0), std::move(out));
  return Status::Ok();
}

Status DeformConv(NodeContext& ctx) {
  return ConvFamily(ctx, 0, 1, ctx.input_dtype(0));
}

}  // namespace

void AddConvPoolRules(RuleTable& t) {
  t.Add("", "Col2Im", Col2Im);
  t.Add("", "DeformConv", DeformConv);
  t.Add("", "Conv", Conv);
  t.Add("com.microsoft", "FusedConv", Conv);  // Conv plus an activation
  t.Add("", "ConvInteger", ConvInteger);
  t.Add("", "QLinearConv", QLinearConv);
  t.Add("", "ConvTranspose", ConvTranspose);
  for (const char* op : {"AveragePool", "MaxPool", "LpPool"}) t.Add("", op, Pool);
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}) {
    t.Add("", op, GlobalPool);
  }
  t.Add("", "MaxUnpool", MaxUnpool);
  t.Add("com.microsoft", "QLinearGlobalAveragePool", QLinearGlobalAveragePool);
}

}  // namespace nxrt::graph::inference
