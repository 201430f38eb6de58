#include "float_pointwise_product.hpp"

#include <algorithm>

#include "float_convolution.hpp"

namespace nxrt::cpu::onednn {
namespace {

using Desc = dnnl::memory::desc;
using dnnl::memory;

Desc RowMajor(int64_t rows, int64_t cols) {
  return Desc({rows, cols}, memory::data_type::f32, memory::format_tag::ab);
}

// The runner's arguments: W as oneDNN's source, X as its weights, then Y.
constexpr size_t kX = 1;
constexpr size_t kY = 2;

}  // namespace

std::optional<FloatPointwiseProduct> FloatPointwiseProduct::Plan(const PointwiseShape& shape) {
  const Desc w = RowMajor(shape.maps, shape.channels);
  const Desc x = RowMajor(shape.channels, DNNL_RUNTIME_DIM_VAL);
  const Desc y = RowMajor(shape.maps, DNNL_RUNTIME_DIM_VAL);
  dnnl::primitive_attr attributes = PlanningAttributes();
  dnnl::post_ops post_ops;
  if (shape.bias) post_ops.append_sum(1.0f);
  shape.activation.AppendTo(post_ops);
  if (post_ops.len() > 0) attributes.set_post_ops(post_ops);
  try {
    const dnnl::matmul::primitive_desc plan(dnnl::matmul::desc(w, x, y), attributes, Engine());
    if (IsReference(plan.impl_info_str())) return std::nullopt;
    FloatPointwiseProduct product(shape);
    // X and Y stand at one pixel until the first Run rebinds them.
    const std::pair<int, Desc> args[] = {{DNNL_ARG_SRC, w},
                                         {DNNL_ARG_WEIGHTS, RowMajor(shape.channels, 1)},
                                         {DNNL_ARG_DST, RowMajor(shape.maps, 1)}};
    product.runner_ = PrimitiveRunner(dnnl::matmul(plan), plan.scratchpad_desc(), args);
    return product;
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

void FloatPointwiseProduct::Run(const float* x, const float* w, const float* bias, float* y,
                                int64_t pixels) {
  if (pixels != pixels_) {
    runner_.Rebind(kX, RowMajor(shape_.channels, pixels));
    runner_.Rebind(kY, RowMajor(shape_.maps, pixels));
    pixels_ = pixels;
  }
  if (shape_.bias) {
    for (int64_t m = 0; m < shape_.maps; ++m) std::fill_n(y + m * pixels, pixels, bias[m]);
  }
  const void* buffers[] = {w, x, y};
  runner_.Run(buffers);
}

}  // namespace nxrt::cpu::onednn
