#include "float_pointwise_product.hpp"

#include <string>
#include <utility>

#include "tensor.hpp"

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

std::optional<PrimitiveRunner> FloatPointwiseProduct::PlanFinish(int64_t pixels) const {
  const Desc y({1, shape_.maps, pixels}, memory::data_type::f32, memory::format_tag::abc);
  // Without a bias, a broadcast zero.
  const Desc bias = shape_.bias
                        ? Desc({1, shape_.maps, 1}, memory::data_type::f32, memory::format_tag::abc)
                        : Desc({1, 1, 1}, memory::data_type::f32, memory::format_tag::abc);
  dnnl::primitive_attr attributes = PlanningAttributes();
  dnnl::post_ops activation;
  shape_.activation.AppendTo(activation);
  if (activation.len() > 0) attributes.set_post_ops(activation);
  try {
    const dnnl::binary::primitive_desc plan(
        dnnl::binary::desc(dnnl::algorithm::binary_add, y, bias, y), attributes, Engine());
    if (IsReference(plan.impl_info_str())) return std::nullopt;
    const std::pair<int, Desc> args[] = {
        {DNNL_ARG_SRC_0, y}, {DNNL_ARG_SRC_1, bias}, {DNNL_ARG_DST, y}};
    return PrimitiveRunner(dnnl::binary(plan), plan.scratchpad_desc(), args);
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

std::optional<FloatPointwiseProduct> FloatPointwiseProduct::Plan(const PointwiseShape& shape) {
  const Desc w = RowMajor(shape.maps, shape.channels);
  const Desc x = RowMajor(shape.channels, DNNL_RUNTIME_DIM_VAL);
  const Desc y = RowMajor(shape.maps, DNNL_RUNTIME_DIM_VAL);
  try {
    const dnnl::matmul::primitive_desc plan(dnnl::matmul::desc(w, x, y), PlanningAttributes(),
                                            Engine());
    if (IsReference(plan.impl_info_str())) return std::nullopt;
    FloatPointwiseProduct product(shape);
    // X and Y stand at one pixel until the first Run rebinds them, and the
    // pass after the product is planned there, so that a shape oneDNN runs
    // only by its reference kernel is refused here.
    const std::pair<int, Desc> args[] = {{DNNL_ARG_SRC, w},
                                         {DNNL_ARG_WEIGHTS, RowMajor(shape.channels, 1)},
                                         {DNNL_ARG_DST, RowMajor(shape.maps, 1)}};
    product.product_ = PrimitiveRunner(dnnl::matmul(plan), plan.scratchpad_desc(), args);
    if (product.Finishes()) {
      std::optional<PrimitiveRunner> finish = product.PlanFinish(1);
      if (!finish) return std::nullopt;
      product.finish_ = std::move(*finish);
    }
    product.pixels_ = 1;
    return product;
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

void FloatPointwiseProduct::Run(const float* x, const float* w, const float* bias, float* y,
                                int64_t pixels) {
  if (pixels != pixels_) {
    product_.Rebind(kX, RowMajor(shape_.channels, pixels));
    product_.Rebind(kY, RowMajor(shape_.maps, pixels));
    if (Finishes()) {
      std::optional<PrimitiveRunner> finish = PlanFinish(pixels);
      if (!finish) {
        FailUnsupported("Conv: oneDNN has no kernel adding the bias and activation of " +
                        std::to_string(shape_.maps) + " maps at " + std::to_string(pixels) +
                        " pixels; run the node on another provider");
      }
      finish_ = std::move(*finish);
    }
    pixels_ = pixels;
  }
  const void* buffers[] = {w, x, y};
  product_.Run(buffers);
  if (Finishes()) {
    static const float kZero = 0.0f;
    const void* finish[] = {y, shape_.bias ? bias : &kZero, y};
    finish_.Run(finish);
  }
}

}  // namespace nxrt::cpu::onednn
