#include "plain_primitive.hpp"

#include "float_layouts.hpp"

#include <algorithm>

namespace nxrt::cpu::onednn {
namespace {

using dnnl::memory;

// The plan `make` builds from PlanningAttributes(), or nullopt when oneDNN
// has none.
template <typename Primitive, typename Make>
std::optional<PlainPrimitive> Planned(const memory::desc& x, const memory::desc& y, Make make) {
  try {
    const typename Primitive::primitive_desc plan = make(PlanningAttributes());
    return PlainPrimitive(Primitive(plan), plan, x, y);
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

}  // namespace

PlainPrimitive::PlainPrimitive(const dnnl::primitive& primitive,
                               const dnnl::primitive_desc_base& plan, const memory::desc& x,
                               const memory::desc& y) {
  const std::pair<int, memory::desc> args[] = {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}};
  runner_ = PrimitiveRunner(primitive, plan.scratchpad_desc(), args);
}

std::optional<PlainPrimitive> PlanEltwise(dnnl::algorithm algorithm, float alpha, float beta,
                                          int64_t count) {
  const memory::desc flat = PlainFloat({count});
  using Eltwise = dnnl::eltwise_forward;
  return Planned<Eltwise>(flat, flat, [&](const dnnl::primitive_attr& attributes) {
    return Eltwise::primitive_desc(
        Eltwise::desc(dnnl::prop_kind::forward_inference, algorithm, flat, alpha, beta), attributes,
        Engine());
  });
}

std::optional<PlainPrimitive> PlanSoftmax(int64_t outer, int64_t n, int64_t inner, bool log) {
  const memory::desc rows = PlainFloat({outer, n, inner});
  const auto kind = dnnl::prop_kind::forward_inference;
  if (log) {
    using LogSoftmax = dnnl::logsoftmax_forward;
    return Planned<LogSoftmax>(rows, rows, [&](const dnnl::primitive_attr& attributes) {
      return LogSoftmax::primitive_desc(LogSoftmax::desc(kind, rows, 1), attributes, Engine());
    });
  }
  using Softmax = dnnl::softmax_forward;
  return Planned<Softmax>(rows, rows, [&](const dnnl::primitive_attr& attributes) {
    return Softmax::primitive_desc(Softmax::desc(kind, rows, 1), attributes, Engine());
  });
}

dnnl::pooling_v2_forward::primitive_desc MaxPoolPlan(const memory::desc& x, const memory::desc& y,
                                                     const WindowGeometry& g,
                                                     const dnnl::primitive_attr& attributes) {
  memory::dims strides, kernel, dilations, pad_begin, pad_end;
  for (size_t a = 0; a < g.in.size(); ++a) {
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
  using Pool = dnnl::pooling_v2_forward;
  return Pool::primitive_desc(
      Pool::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_max, x, y, strides,
                 kernel, dilations, pad_begin, pad_end),
      attributes, Engine());
}

std::optional<PlainPrimitive> PlanMaxPool(int64_t batch, int64_t channels,
                                          const WindowGeometry& g) {
  const size_t rank = g.in.size();
  if (rank == 0 || rank > 3) return std::nullopt;
  memory::dims x_dims{batch, channels}, y_dims{batch, channels};
  x_dims.insert(x_dims.end(), g.in.begin(), g.in.end());
  y_dims.insert(y_dims.end(), g.out.begin(), g.out.end());
  const memory::desc x = PlainFloat(x_dims), y = PlainFloat(y_dims);
  using Pool = dnnl::pooling_v2_forward;
  return Planned<Pool>(x, y, [&](const dnnl::primitive_attr& attributes) {
    return MaxPoolPlan(x, y, g, attributes);
  });
}

}  // namespace nxrt::cpu::onednn
