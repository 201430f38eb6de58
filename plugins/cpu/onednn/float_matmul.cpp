#include "float_matmul.hpp"

#include <string>

#include "tensor.hpp"

namespace nxrt::cpu::onednn {
namespace {

using Desc = dnnl::memory::desc;
using dnnl::memory;

// A rows x cols float matrix, read transposed from a cols x rows buffer when
// `transposed`.
Desc MatrixDesc(int64_t rows, int64_t cols, bool transposed) {
  return Desc({rows, cols}, memory::data_type::f32,
              transposed ? memory::dims{1, rows} : memory::dims{cols, 1});
}

}  // namespace

FloatMatmul::FloatMatmul(const MatmulShape& shape, WeightsLayout layout)
    : given_b_(MatrixDesc(shape.k, shape.n, shape.trans_b)) {
  const Desc a = MatrixDesc(shape.m, shape.k, shape.trans_a);
  const Desc b = layout == WeightsLayout::kPreferred
                     ? Desc({shape.k, shape.n}, memory::data_type::f32, memory::format_tag::any)
                     : given_b_;
  const Desc y = MatrixDesc(shape.m, shape.n, false);
  dnnl::primitive_attr attributes = PlanningAttributes();
  if (shape.alpha != 1.0f) attributes.set_output_scales(0, {shape.alpha});
  if (shape.beta != 0.0f) {
    dnnl::post_ops post_ops;
    post_ops.append_sum(shape.beta);
    attributes.set_post_ops(post_ops);
  }
  try {
    const dnnl::matmul::primitive_desc plan(dnnl::matmul::desc(a, b, y), attributes, Engine());
    b_ = plan.weights_desc();
    const std::pair<int, Desc> args[] = {
        {DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b_}, {DNNL_ARG_DST, y}};
    runner_ = PrimitiveRunner(dnnl::matmul(plan), plan.scratchpad_desc(), args);
  } catch (const dnnl::error& e) {
    FailUnsupported(std::string("oneDNN has no float matmul for this shape: ") + e.what());
  }
}

}  // namespace nxrt::cpu::onednn
