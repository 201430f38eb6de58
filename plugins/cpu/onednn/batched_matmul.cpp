#include "batched_matmul.hpp"

#include <utility>

#include "float_convolution.hpp"

namespace nxrt::cpu::onednn {
namespace {

using Desc = dnnl::memory::desc;

Desc Batched(int64_t batch, int64_t rows, int64_t cols) {
  return Desc({batch, rows, cols}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::abc);
}

}  // namespace

std::optional<BatchedFloatMatmul> BatchedFloatMatmul::Plan() {
  constexpr int64_t kRuntime = DNNL_RUNTIME_DIM_VAL;
  const Desc any = Batched(kRuntime, kRuntime, kRuntime);
  try {
    const dnnl::matmul::primitive_desc plan(dnnl::matmul::desc(any, any, any), PlanningAttributes(),
                                            Engine());
    if (IsReference(plan.impl_info_str())) return std::nullopt;
    BatchedFloatMatmul product;
    // Bound at one item of 1x1 by 1x1 until the first Run binds its extents.
    const std::pair<int, Desc> args[] = {{DNNL_ARG_SRC, Batched(1, 1, 1)},
                                         {DNNL_ARG_WEIGHTS, Batched(1, 1, 1)},
                                         {DNNL_ARG_DST, Batched(1, 1, 1)}};
    product.runner_ = PrimitiveRunner(dnnl::matmul(plan), plan.scratchpad_desc(), args);
    product.batch_ = product.m_ = product.n_ = product.k_ = 1;
    return product;
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

void BatchedFloatMatmul::Run(int64_t batch, int64_t m, int64_t n, int64_t k, const float* a,
                             const float* b, float* y) {
  if (batch != batch_ || m != m_ || n != n_ || k != k_) {
    runner_.Rebind(0, Batched(batch, m, k));
    runner_.Rebind(1, Batched(batch, k, n));
    runner_.Rebind(2, Batched(batch, m, n));
    batch_ = batch;
    m_ = m;
    n_ = n;
    k_ = k;
  }
  const void* buffers[] = {a, b, y};
  runner_.Run(buffers);
}

}  // namespace nxrt::cpu::onednn
