#include "float_eltwise.hpp"

namespace nxrt::cpu::onednn {

std::optional<FloatEltwise> FloatEltwise::Plan(dnnl::algorithm algorithm, float alpha, float beta,
                                               int64_t count) {
  const dnnl::memory::desc flat({count}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
  try {
    using Eltwise = dnnl::eltwise_forward;
    const Eltwise::primitive_desc plan(
        Eltwise::desc(dnnl::prop_kind::forward_inference, algorithm, flat, alpha, beta),
        PlanningAttributes(), Engine());
    FloatEltwise eltwise;
    const std::pair<int, dnnl::memory::desc> args[] = {{DNNL_ARG_SRC, flat}, {DNNL_ARG_DST, flat}};
    eltwise.runner_ = PrimitiveRunner(Eltwise(plan), plan.scratchpad_desc(), args);
    return eltwise;
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

}  // namespace nxrt::cpu::onednn
