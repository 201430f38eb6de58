// FloatConvolution::PlanTransposed: ConvTranspose on oneDNN's
// deconvolution, which is the backward-data pass of the forward convolution
// with the same strides, dilations and pads.
#include <vector>

#include "convolution_dims.hpp"
#include "float_convolution.hpp"
#include "float_layouts.hpp"

namespace nxrt::cpu::onednn {
namespace {

using Desc = dnnl::memory::desc;
using dnnl::memory;

// W as ONNX lays it out, [channels, maps / group, kernel...], described in
// oneDNN's order of dims ([maps, channels, kernel...], or per group
// [group, maps / group, channels / group, kernel...]) by its strides.
Desc GivenWeights(const ConvolutionShape& shape) {
  const Dims& kernel = shape.geometry.kernel;
  int64_t window = 1;
  for (int64_t k : kernel) window *= k;
  const int64_t maps = shape.maps / shape.group, channels = shape.channels / shape.group;
  memory::dims dims =
      shape.group == 1 ? memory::dims{maps, channels} : memory::dims{shape.group, maps, channels};
  memory::dims strides = shape.group == 1
                             ? memory::dims{window, maps * window}
                             : memory::dims{channels * maps * window, window, maps * window};
  int64_t stride = window;
  for (int64_t k : kernel) {
    stride /= k;
    dims.push_back(k);
    strides.push_back(stride);
  }
  return Desc(dims, memory::data_type::f32, strides);
}

}  // namespace

std::optional<FloatConvolution> FloatConvolution::PlanTransposed(const ConvolutionShape& shape) {
  const WindowGeometry& g = shape.geometry;
  if (g.in.empty() || g.in.size() > 3 || !shape.activation.none() || shape.blocked_output)
    return std::nullopt;
  const memory::dims x_dims = WithSpatial({shape.batch, shape.channels}, g.out);
  const memory::dims y_dims = WithSpatial({shape.batch, shape.maps}, g.in);
  const Desc given_w = GivenWeights(shape);
  const WindowDims window = WindowDimsOf(g);
  using Deconv = dnnl::deconvolution_forward;
  const auto kind = dnnl::prop_kind::forward_inference;
  const auto algorithm = dnnl::algorithm::deconvolution_direct;
  const Desc x = AnyFloat(x_dims), w = AnyFloat(given_w.dims()), y = AnyFloat(y_dims);
  try {
    const Deconv::primitive_desc plan(
        shape.bias
            ? Deconv::desc(kind, algorithm, x, w, PlainFloat({shape.maps}), y, window.strides,
                           window.dilations, window.pad_begin, window.pad_end)
            : Deconv::desc(kind, algorithm, x, w, y, window.strides, window.dilations,
                           window.pad_begin, window.pad_end),
        PlanningAttributes(), Engine());
    if (IsReference(plan.impl_info_str())) return std::nullopt;
    FloatConvolution c;
    c.Install(Deconv(plan),
              {plan.src_desc(), plan.weights_desc(), plan.dst_desc(),
               shape.bias ? plan.bias_desc() : Desc(), plan.scratchpad_desc()},
              given_w, x_dims, y_dims, false, plan.impl_info_str());
    return c;
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

}  // namespace nxrt::cpu::onednn
