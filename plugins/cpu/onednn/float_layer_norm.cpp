#include "float_layer_norm.hpp"

#include <vector>

namespace nxrt::cpu::onednn {

std::optional<FloatLayerNorm> FloatLayerNorm::Plan(int64_t rows, int64_t columns, float epsilon,
                                                   bool shift) {
  using dnnl::memory;
  const memory::desc data({rows, columns}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc parameters({columns}, memory::data_type::f32, memory::format_tag::a);
  auto flags = dnnl::normalization_flags::use_scale;
  if (shift) flags |= dnnl::normalization_flags::use_shift;
  try {
    using LayerNorm = dnnl::layer_normalization_forward;
    const LayerNorm::primitive_desc plan(
        LayerNorm::desc(dnnl::prop_kind::forward_inference, data, epsilon, flags),
        PlanningAttributes(), Engine());
    std::vector<std::pair<int, memory::desc>> args = {
        {DNNL_ARG_SRC, data}, {DNNL_ARG_DST, data}, {DNNL_ARG_SCALE, parameters}};
    if (shift) args.emplace_back(DNNL_ARG_SHIFT, parameters);
    FloatLayerNorm layer_norm;
    layer_norm.runner_ = PrimitiveRunner(LayerNorm(plan), plan.scratchpad_desc(), args);
    return layer_norm;
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

}  // namespace nxrt::cpu::onednn
