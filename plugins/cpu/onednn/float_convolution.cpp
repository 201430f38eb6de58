#include "float_convolution.hpp"

#include "convolution_dims.hpp"
#include "float_layouts.hpp"
#include "thread_workspace.hpp"

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>

namespace nxrt::cpu::onednn {
namespace {

using Desc = dnnl::memory::desc;
using dnnl::memory;

// The output layout asked of oneDNN. Left free, it picks channels-last for
// mid-sized convolutions, and its reorder from there back to NCHW is slow
// (the CNN's second layer: 19 us, against 7 us from 16-channel blocks, for an
// equally fast convolution).
Desc Output(const memory::dims& dims) {
  static constexpr memory::format_tag kBlocked[] = {
      memory::format_tag::nCw16c, memory::format_tag::nChw16c, memory::format_tag::nCdhw16c};
  if (dims[1] % 16 != 0) return AnyFloat(dims);
  return Desc(dims, memory::data_type::f32, kBlocked[dims.size() - 3]);
}

bool AllOnes(const Dims& dims) {
  return std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d == 1; });
}

// Winograd's minimal filtering trades multiplications for cheap transforms:
// a 3x3 stride-1 convolution computes 2.25x (F(2x2,3x3)) to 4x (F(4x4,3x3))
// fewer products, at float rounding well inside the conformance tolerance.
// With 16 or more channels in and out it beats oneDNN's direct kernels on
// every shape measured here (1.1x-1.3x on the CNN's second layer, 3x at 128
// channels on 28x28); with fewer, the transforms dominate.
bool WinogradPays(const ConvolutionShape& shape) {
  const WindowGeometry& g = shape.geometry;
  return shape.group == 1 && shape.channels >= 16 && shape.maps >= 16 && g.kernel.size() == 2 &&
         g.kernel[0] == 3 && g.kernel[1] == 3 && AllOnes(g.strides) && AllOnes(g.dilations);
}

// Winograd keeps transformed tiles in scratch memory, for some shapes
// several times the activations (160 MB for 128 channels of 256x256, whose
// input and output take 67 MB); past that, or past 16 MiB for small
// tensors, the direct kernel, which needs none, is kept.
bool ScratchFits(size_t scratch_bytes, const memory::dims& x, const memory::dims& y) {
  const auto bytes = [](const memory::dims& dims) {
    size_t n = sizeof(float);
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    return n;
  };
  return scratch_bytes <= std::max<size_t>(size_t{16} << 20, bytes(x) + bytes(y));
}

struct Layouts {
  Desc x;
  Desc y;
};

// The layouts of X and Y to plan with, best first. oneDNN picks its kernel
// from the layouts it is given, and falls to a reference kernel, hundreds of
// times slower, for some pairs: a grouped convolution with a plain X and a
// 16-channel-blocked Y among them (a depthwise 5x5 on 240 channels: 97 ms
// against 0.14 ms blocked in and out).
std::vector<Layouts> CandidateLayouts(const ConvolutionShape& shape, const memory::dims& x_dims,
                                      const memory::dims& y_dims) {
  static constexpr memory::format_tag kBlocked[] = {
      memory::format_tag::nCw16c, memory::format_tag::nChw16c, memory::format_tag::nCdhw16c};
  const memory::format_tag blocked = kBlocked[x_dims.size() - 3];
  const int64_t group_channels = shape.channels / shape.group;
  std::vector<Layouts> candidates;
  // With few input channels a dense convolution has direct kernels that
  // read NCHW as it is, faster than a reorder to a blocked layout plus the
  // blocked kernel (the 3-channel first layer of the CNN: 46 against 68 us).
  const bool plain_x = shape.group == 1 && group_channels < 8;
  candidates.push_back({plain_x ? PlainFloat(x_dims) : AnyFloat(x_dims), Output(y_dims)});
  if (shape.channels % 16 == 0 && shape.maps % 16 == 0) {
    candidates.push_back({Desc(x_dims, memory::data_type::f32, blocked),
                          Desc(y_dims, memory::data_type::f32, blocked)});
  }
  // A plan that keeps Y blocked takes only a blocked Y.
  if (!shape.blocked_output || shape.maps % 16 != 0) {
    candidates.push_back({AnyFloat(x_dims), AnyFloat(y_dims)});
  }
  return candidates;
}

}  // namespace

bool IsReference(std::string_view implementation) {
  return implementation.starts_with("ref");
}

namespace {

// `shape` without the spatial axes of extent 1 that a 1-wide kernel covers
// whole (a [N, C, H, 1] image of a 1-D model exported as 2-D): the same
// bytes, planned with one axis fewer. oneDNN's kernels vectorise along the
// last spatial axis, so a width of 1 slows them (Magika's 5x1 convolution
// over 512 rows: 9.2 ms, 6.4 ms as 1-D).
// A plan whose Y stays blocked for the next primitive keeps its axes.
ConvolutionShape WithoutUnitAxes(const ConvolutionShape& shape) {
  ConvolutionShape squeezed = shape;
  if (shape.blocked_output) return squeezed;
  WindowGeometry& g = squeezed.geometry;
  for (size_t a = g.in.size(); a-- > 0 && g.in.size() > 1;) {
    if (g.in[a] != 1 || g.out[a] != 1 || g.kernel[a] != 1 || g.pad_begin[a] != 0 ||
        g.pad_end[a] != 0) {
      continue;
    }
    for (Dims* dims :
         {&g.in, &g.out, &g.kernel, &g.strides, &g.dilations, &g.pad_begin, &g.pad_end}) {
      dims->erase(dims->begin() + static_cast<std::ptrdiff_t>(a));
    }
  }
  return squeezed;
}

}  // namespace

std::optional<FloatConvolution> FloatConvolution::Plan(const ConvolutionShape& given) {
  const ConvolutionShape shape = WithoutUnitAxes(given);
  if (shape.geometry.in.empty() || shape.geometry.in.size() > 3) return std::nullopt;
  if (shape.blocked_output && shape.maps % 16 != 0) return std::nullopt;
  FloatConvolution c;
  const WindowGeometry& g = shape.geometry;
  const memory::dims x_dims = WithSpatial({shape.batch, shape.channels}, g.in);
  const memory::dims y_dims = WithSpatial({shape.batch, shape.maps}, g.out);
  const int64_t group_channels = shape.channels / shape.group;
  const memory::dims w_plain = WithSpatial({shape.maps, group_channels}, g.kernel);
  const memory::dims w_dims =
      shape.group == 1
          ? w_plain
          : WithSpatial({shape.group, shape.maps / shape.group, group_channels}, g.kernel);
  const WindowDims window = WindowDimsOf(g);
  try {
    const auto kind = dnnl::prop_kind::forward_inference;
    using Conv = dnnl::convolution_forward;
    const auto describe = [&](dnnl::algorithm algorithm, const Layouts& layouts) {
      return shape.bias
                 ? Conv::desc(kind, algorithm, layouts.x, AnyFloat(w_dims),
                              PlainFloat({shape.maps}), layouts.y, window.strides, window.dilations,
                              window.pad_begin, window.pad_end)
                 : Conv::desc(kind, algorithm, layouts.x, AnyFloat(w_dims), layouts.y,
                              window.strides, window.dilations, window.pad_begin, window.pad_end);
    };
    dnnl::primitive_attr attributes = PlanningAttributes();
    if (!shape.activation.none()) {
      dnnl::post_ops activation;
      shape.activation.AppendTo(activation);
      attributes.set_post_ops(activation);
    }
    const std::vector<Layouts> candidates = CandidateLayouts(shape, x_dims, y_dims);
    const Conv::primitive_desc plan = [&] {
      if (WinogradPays(shape)) {
        try {
          Conv::primitive_desc winograd(
              describe(dnnl::algorithm::convolution_winograd, candidates.front()), attributes,
              Engine());
          if (ScratchFits(winograd.scratchpad_desc().get_size(), x_dims, y_dims)) return winograd;
        } catch (const dnnl::error&) {
          // No Winograd kernel for this machine or shape: a direct one below.
        }
      }
      // The first candidate with an optimised kernel; a reference one only
      // when no candidate has better.
      std::optional<Conv::primitive_desc> reference;
      for (const Layouts& layouts : candidates) {
        try {
          Conv::primitive_desc direct(describe(dnnl::algorithm::convolution_direct, layouts),
                                      attributes, Engine());
          if (!IsReference(direct.impl_info_str())) return direct;
          if (!reference) reference = std::move(direct);
        } catch (const dnnl::error&) {
          // No kernel for these layouts: the next candidate.
        }
      }
      if (!reference) throw dnnl::error(dnnl_unimplemented, "no convolution for these layouts");
      return *std::move(reference);
    }();
    c.Install(Conv(plan),
              {plan.src_desc(), plan.weights_desc(), plan.dst_desc(),
               shape.bias ? plan.bias_desc() : Desc(), plan.scratchpad_desc()},
              PlainFloat(w_dims), x_dims, y_dims, shape.blocked_output, plan.impl_info_str());
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
  return c;
}

void FloatConvolution::Install(dnnl::primitive primitive, const PlannedDescs& descs,
                               const Desc& given_w, const memory::dims& x_dims,
                               const memory::dims& y_dims, bool keep_blocked,
                               std::string implementation) {
  implementation_ = std::move(implementation);
  given_w_desc_ = given_w;
  w_desc_ = descs.weights;
  reorder_x_ = descs.src != PlainFloat(x_dims);
  if (reorder_x_) {
    // Rounded up so that Y's copy after it stays 64-byte aligned.
    x_blocked_bytes_ = (descs.src.get_size() + 63) / 64 * 64;
    x_reorder_ = PlanReorder(PlainFloat(x_dims), descs.src);
  }
  keep_blocked_ = keep_blocked;
  reorder_y_ = !keep_blocked_ && descs.dst != PlainFloat(y_dims);
  if (keep_blocked_) y_blocked_ = memory(descs.dst, Engine());
  if (reorder_y_) {
    y_blocked_bytes_ = descs.dst.get_size();
    y_reorder_ = PlanReorder(descs.dst, PlainFloat(y_dims));
  }
  std::vector<std::pair<int, Desc>> args = {
      {DNNL_ARG_SRC, descs.src}, {DNNL_ARG_WEIGHTS, w_desc_}, {DNNL_ARG_DST, descs.dst}};
  if (!descs.bias.is_zero()) args.emplace_back(DNNL_ARG_BIAS, descs.bias);
  convolution_ = PrimitiveRunner(std::move(primitive), descs.scratchpad, args);
}

std::shared_ptr<PreparedWeights> FloatConvolution::PrepareWeights(const float* w) const {
  return std::make_shared<PreparedWeights>(given_w_desc_, w, w_desc_);
}

void FloatConvolution::Run(const float* x, const float* w, const PreparedWeights* prepared,
                           const float* bias, float* y) {
  auto* blocked = static_cast<std::byte*>(
      ThreadWorkspace(Workspace::kActivations, x_blocked_bytes_ + y_blocked_bytes_));
  const void* x_in = x;
  if (reorder_x_) {
    x_in = blocked;
    const void* buffers[] = {x, x_in};
    x_reorder_.Run(buffers);
  }
  const void* w_in = prepared != nullptr ? prepared->data() : nullptr;
  if (prepared == nullptr && given_w_desc_ == w_desc_) {
    w_in = w;
  } else if (prepared == nullptr) {
    // Weights that are not constant: reordered on every call, by a reorder
    // into a buffer both made on the first (constant weights never need
    // them, and a plan made at every new shape should not plan it).
    if (!w_prepared_) {
      w_prepared_ = memory(w_desc_, Engine());
      w_reorder_ = PlanReorder(given_w_desc_, w_desc_);
    }
    w_in = w_prepared_.get_data_handle();
    const void* buffers[] = {w, w_in};
    w_reorder_.Run(buffers);
  }
  void* y_out = y;
  if (keep_blocked_) y_out = y_blocked_.get_data_handle();
  if (reorder_y_) y_out = blocked + x_blocked_bytes_;
  const void* buffers[] = {x_in, w_in, y_out, bias};
  convolution_.Run(std::span(buffers, bias != nullptr ? 4 : 3));
  if (reorder_y_) {
    const void* back[] = {y_out, y};
    y_reorder_.Run(back);
  }
}

}  // namespace nxrt::cpu::onednn
