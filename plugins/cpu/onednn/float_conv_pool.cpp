#include "float_conv_pool.hpp"

#include <utility>

#include "plain_primitive.hpp"

namespace nxrt::cpu::onednn {

std::optional<FloatConvPool> FloatConvPool::Plan(ConvolutionShape convolution,
                                                 const WindowGeometry& pool) {
  if (pool.in != convolution.geometry.out) return std::nullopt;
  convolution.blocked_output = true;
  std::optional<FloatConvolution> planned = FloatConvolution::Plan(convolution);
  if (!planned) return std::nullopt;
  FloatConvPool c(std::move(*planned));
  using dnnl::memory;
  memory::dims y_dims{convolution.batch, convolution.maps};
  y_dims.insert(y_dims.end(), pool.out.begin(), pool.out.end());
  static constexpr memory::format_tag kPlain[] = {memory::format_tag::abc, memory::format_tag::abcd,
                                                  memory::format_tag::abcde};
  const memory::desc plain(y_dims, memory::data_type::f32, kPlain[y_dims.size() - 3]);
  const memory::desc blocks = c.convolution_.blocked_output().get_desc();
  try {
    const auto plan =
        MaxPoolPlan(blocks, memory::desc(y_dims, memory::data_type::f32, memory::format_tag::any),
                    pool, PlanningAttributes());
    c.pooled_ = memory(plan.dst_desc(), Engine());
    const std::pair<int, memory::desc> pool_args[] = {{DNNL_ARG_SRC, blocks},
                                                      {DNNL_ARG_DST, plan.dst_desc()}};
    c.pool_ = PrimitiveRunner(dnnl::pooling_v2_forward(plan), plan.scratchpad_desc(), pool_args);
    const dnnl::reorder::primitive_desc back(Engine(), plan.dst_desc(), Engine(), plain,
                                             PlanningAttributes());
    const std::pair<int, memory::desc> back_args[] = {{DNNL_ARG_FROM, plan.dst_desc()},
                                                      {DNNL_ARG_TO, plain}};
    c.reorder_ = PrimitiveRunner(dnnl::reorder(back), back.scratchpad_desc(), back_args);
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
  return c;
}

void FloatConvPool::Run(const float* x, const float* w, const PreparedWeights* prepared,
                        const float* bias, float* y) {
  convolution_.Run(x, w, prepared, bias, nullptr);
  const void* pooling[] = {convolution_.blocked_output().get_data_handle(),
                           pooled_.get_data_handle()};
  pool_.Run(pooling);
  const void* back[] = {pooled_.get_data_handle(), y};
  reorder_.Run(back);
}

}  // namespace nxrt::cpu::onednn
