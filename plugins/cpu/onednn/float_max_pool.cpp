#include "float_max_pool.hpp"

namespace nxrt::cpu::onednn {

std::optional<FloatMaxPool> FloatMaxPool::Plan(int64_t batch, int64_t channels,
                                               const WindowGeometry& g) {
  using dnnl::memory;
  const size_t rank = g.in.size();
  if (rank == 0 || rank > 3) return std::nullopt;
  memory::dims x_dims{batch, channels}, y_dims{batch, channels};
  memory::dims strides, kernel, dilations, pad_begin, pad_end;
  for (size_t a = 0; a < rank; ++a) {
    x_dims.push_back(g.in[a]);
    y_dims.push_back(g.out[a]);
    strides.push_back(g.strides[a]);
    kernel.push_back(g.kernel[a]);
    dilations.push_back(g.dilations[a] - 1);  // oneDNN counts the gaps
    pad_begin.push_back(g.pad_begin[a]);
    // Ceil mode's last window may reach past the end pad; oneDNN derives the
    // output extent from the pads, so the end pad covers that window. Past
    // the input a maximum ignores what it covers.
    const int64_t reach = (g.out[a] - 1) * g.strides[a] + (g.kernel[a] - 1) * g.dilations[a] + 1;
    pad_end.push_back(std::max(g.pad_end[a], reach - g.in[a] - g.pad_begin[a]));
  }
  const auto tag = rank == 1   ? memory::format_tag::ncw
                   : rank == 2 ? memory::format_tag::nchw
                               : memory::format_tag::ncdhw;
  const memory::desc x(x_dims, memory::data_type::f32, tag);
  const memory::desc y(y_dims, memory::data_type::f32, tag);
  try {
    using Pool = dnnl::pooling_v2_forward;
    const Pool::primitive_desc plan(
        Pool::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_max, x, y, strides,
                   kernel, dilations, pad_begin, pad_end),
        PlanningAttributes(), Engine());
    FloatMaxPool pool;
    const std::pair<int, memory::desc> args[] = {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}};
    pool.runner_ = PrimitiveRunner(Pool(plan), plan.scratchpad_desc(), args);
    return pool;
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

}  // namespace nxrt::cpu::onednn
