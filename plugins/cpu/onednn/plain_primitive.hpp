// A oneDNN primitive from one float tensor to another, both plain row-major,
// planned once for their shapes: the form of the elementwise, softmax and
// max-pooling plans below. Each planner returns nullopt when oneDNN has no
// plan; every extent it is given must be positive.
#pragma once

#include <cstdint>
#include <optional>

#include "primitive_runner.hpp"
#include "window_geometry.hpp"

namespace nxrt::cpu::onednn {

class PlainPrimitive {
 public:
  // `primitive` takes DNNL_ARG_SRC `x` and DNNL_ARG_DST `y`.
  PlainPrimitive(const dnnl::primitive& primitive, const dnnl::primitive_desc_base& plan,
                 const dnnl::memory::desc& x, const dnnl::memory::desc& y);

  void Run(const float* x, float* y) {
    const void* buffers[] = {x, y};
    runner_.Run(buffers);
  }

 private:
  PrimitiveRunner runner_;
};

// y = f(x) over `count` elements for oneDNN's eltwise `algorithm` with its
// `alpha` and `beta`. oneDNN's JIT kernels use the widest vectors the CPU
// has; the EP's own loops are compiled for baseline x86-64.
std::optional<PlainPrimitive> PlanEltwise(dnnl::algorithm algorithm, float alpha, float beta,
                                          int64_t count);

// Softmax (or LogSoftmax) of the tensor viewed as [outer, n, inner], along n.
std::optional<PlainPrimitive> PlanSoftmax(int64_t outer, int64_t n, int64_t inner, bool log);

// MaxPool of an NCHW tensor with one to three spatial axes (strides,
// dilations, uneven pads, ceil mode).
std::optional<PlainPrimitive> PlanMaxPool(int64_t batch, int64_t channels,
                                          const WindowGeometry& geometry);

// The max-pooling plan from `x` to `y` in any layouts oneDNN takes, over
// `geometry`'s one to three spatial axes; throws dnnl::error when oneDNN has
// none.
dnnl::pooling_v2_forward::primitive_desc MaxPoolPlan(const dnnl::memory::desc& x,
                                                     const dnnl::memory::desc& y,
                                                     const WindowGeometry& geometry,
                                                     const dnnl::primitive_attr& attributes);

}  // namespace nxrt::cpu::onednn
