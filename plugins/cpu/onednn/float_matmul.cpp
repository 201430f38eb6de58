#include "float_matmul.hpp"

#include <string>
#include <vector>

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

// The runner's arguments, in order: A, B, Y, then the bias and the residual
// where the shape has them.
constexpr size_t kA = 0;
constexpr size_t kY = 2;

}  // namespace

FloatMatmul::FloatMatmul(const MatmulShape& shape, WeightsLayout layout)
    : shape_(shape),
      layout_(layout),
      runtime_m_(!shape.trans_a && !shape.residual),
      given_b_(MatrixDesc(shape.k, shape.n, shape.trans_b)) {
  // The plan leaves M to run time where A is row-major and no post-op reads
  // an [M,N] operand (oneDNN takes none at a runtime extent), and N and K
  // too where B is read row-major as given, so that the node's variants
  // plan to one primitive, which oneDNN's primitive cache hands back
  // instead of generating its code again.
  const bool runtime_m = runtime_m_;
  const bool runtime_nk = runtime_m && !shape.trans_b && layout == WeightsLayout::kAsGiven;
  const int64_t planned_m = runtime_m ? DNNL_RUNTIME_DIM_VAL : shape.m;
  const int64_t planned_n = runtime_nk ? DNNL_RUNTIME_DIM_VAL : shape.n;
  const int64_t planned_k = runtime_nk ? DNNL_RUNTIME_DIM_VAL : shape.k;
  const Desc a = MatrixDesc(shape.m, shape.k, shape.trans_a);
  const Desc b = layout == WeightsLayout::kPreferred
                     ? Desc({shape.k, shape.n}, memory::data_type::f32, memory::format_tag::any)
                     : given_b_;
  const Desc y = MatrixDesc(shape.m, shape.n, false);
  const auto row_major = [](int64_t rows, int64_t cols) {
    return Desc({rows, cols}, memory::data_type::f32, memory::format_tag::ab);
  };
  const Desc planned_a = runtime_m ? row_major(planned_m, planned_k) : a;
  const Desc planned_b = runtime_nk ? row_major(planned_k, planned_n) : b;
  const Desc planned_y = row_major(planned_m, planned_n);
  // A bias comes with alpha 1 only, so the order of the two never matters.
  if (shape.bias && shape.alpha != 1.0f) FailUnsupported("a float matmul scales no bias");
  dnnl::primitive_attr attributes = PlanningAttributes();
  if (shape.alpha != 1.0f) attributes.set_output_scales(0, {shape.alpha});
  // Post-ops run in the order appended, after the bias.
  dnnl::post_ops post_ops;
  std::vector<int> binary_arguments;
  if (shape.beta != 0.0f) post_ops.append_sum(shape.beta);
  if (shape.activation != dnnl::algorithm::undef) {
    post_ops.append_eltwise(1.0f, shape.activation, 0.0f, 0.0f);
  }
  if (shape.residual) {
    binary_arguments.push_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(post_ops.len()) | DNNL_ARG_SRC_1);
    post_ops.append_binary(dnnl::algorithm::binary_add, planned_y);
  }
  if (post_ops.len() > 0) attributes.set_post_ops(post_ops);
  const Desc bias = Desc({1, shape.n}, memory::data_type::f32, memory::dims{shape.n, 1});
  const Desc planned_bias = runtime_nk ? row_major(1, planned_n) : bias;
  try {
    const dnnl::matmul::primitive_desc plan(
        shape.bias ? dnnl::matmul::desc(planned_a, planned_b, planned_bias, planned_y)
                   : dnnl::matmul::desc(planned_a, planned_b, planned_y),
        attributes, Engine());
    b_ = runtime_nk ? b : plan.weights_desc();
    std::vector<std::pair<int, Desc>> args = {
        {DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b_}, {DNNL_ARG_DST, y}};
    if (shape.bias) args.emplace_back(DNNL_ARG_BIAS, bias);
    for (int argument : binary_arguments) args.emplace_back(argument, y);
    runner_ = PrimitiveRunner(dnnl::matmul(plan), plan.scratchpad_desc(), args);
  } catch (const dnnl::error& e) {
    FailUnsupported(std::string("oneDNN has no float matmul for this shape: ") + e.what());
  }
}

bool FloatMatmul::ServesRowsOf(const MatmulShape& other) const {
  const MatmulShape& s = shape_;
  return (runtime_m_ || other.m == s.m) && other.n == s.n && other.k == s.k &&
         other.trans_a == s.trans_a && other.trans_b == s.trans_b && other.alpha == s.alpha &&
         other.beta == s.beta && other.bias == s.bias && other.activation == s.activation &&
         other.residual == s.residual;
}

void FloatMatmul::BindRows(int64_t m) {
  if (m == shape_.m) return;
  runner_.Rebind(kA, MatrixDesc(m, shape_.k, false));
  runner_.Rebind(kY, MatrixDesc(m, shape_.n, false));
  shape_.m = m;
}

void FloatMatmul::Run(const float* a, const float* b, float* y, const float* bias,
                      const float* residual) {
  const void* buffers[5] = {a, b, y};
  size_t count = 3;
  if (shape_.bias) buffers[count++] = bias;
  if (shape_.residual) buffers[count++] = residual;
  runner_.Run(std::span(buffers, count));
}

}  // namespace nxrt::cpu::onednn
