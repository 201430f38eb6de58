#include "float_softmax.hpp"

namespace nxrt::cpu::onednn {

std::optional<FloatSoftmax> FloatSoftmax::Plan(int64_t outer, int64_t n, int64_t inner, bool log) {
  const dnnl::memory::desc rows({outer, n, inner}, dnnl::memory::data_type::f32,
                                dnnl::memory::format_tag::abc);
  const auto kind = dnnl::prop_kind::forward_inference;
  const std::pair<int, dnnl::memory::desc> args[] = {{DNNL_ARG_SRC, rows}, {DNNL_ARG_DST, rows}};
  FloatSoftmax softmax;
  try {
    if (log) {
      using LogSoftmax = dnnl::logsoftmax_forward;
      const LogSoftmax::primitive_desc plan(LogSoftmax::desc(kind, rows, 1), PlanningAttributes(),
                                            Engine());
      softmax.runner_ = PrimitiveRunner(LogSoftmax(plan), plan.scratchpad_desc(), args);
    } else {
      using Softmax = dnnl::softmax_forward;
      const Softmax::primitive_desc plan(Softmax::desc(kind, rows, 1), PlanningAttributes(),
                                         Engine());
      softmax.runner_ = PrimitiveRunner(Softmax(plan), plan.scratchpad_desc(), args);
    }
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
  return softmax;
}

}  // namespace nxrt::cpu::onednn
