#include "inference/element_propagation.hpp"

#include <vector>

#include "nxrt/support/checked_math.hpp"

namespace nxrt::graph::inference {

bool StaticCount(const Shape& shape, size_t& count) {
  count = 1;
  for (const Dim& d : shape) {
    if (!d.is_static() || d.extent() < 0) return false;
    const std::optional<size_t> product = CheckedMul(count, static_cast<size_t>(d.extent()));
    if (!product || *product > (size_t{1} << 40)) return false;
    count = *product;
  }
  return true;
}

void PropagateElementwise(NodeContext& ctx, std::span<const size_t> inputs, const Shape& out_shape,
                          const ElementFn& fn) {
  size_t out_count = 0;
  if (!StaticCount(out_shape, out_count) || out_count > ctx.options().max_tracked_elements) return;
  const size_t rank = out_shape.size();
  std::vector<const Elements*> elements;
  std::vector<std::vector<size_t>> strides;
  for (size_t i : inputs) {
    const Elements* e = ctx.input_elements(i);
    const Shape* s = ctx.input_shape(i);
    size_t count = 0;
    if (e == nullptr || s == nullptr || !StaticCount(*s, count) || count != e->size() ||
        s->size() > rank) {
      return;
    }
    // Broadcast strides: 0 along axes the input repeats.
    std::vector<size_t> stride(rank, 0);
    size_t step = 1;
    for (size_t k = s->size(); k-- > 0;) {
      const size_t axis = rank - s->size() + k;
      const auto extent = static_cast<size_t>((*s)[k].extent());
      stride[axis] = extent == 1 ? 0 : step;
      step *= extent;
    }
    elements.push_back(e);
    strides.push_back(std::move(stride));
  }
  Elements out(out_count);
  std::vector<size_t> index(rank, 0);
  std::vector<Dim> args(elements.size(), Dim::Static(0));
  for (size_t flat = 0; flat < out_count; ++flat) {
    bool known = true;
    for (size_t j = 0; j < elements.size() && known; ++j) {
      size_t offset = 0;
      for (size_t k = 0; k < rank; ++k) offset += index[k] * strides[j][k];
      const auto& e = (*elements[j])[offset];
      if (!e)
        known = false;
      else
        args[j] = *e;
    }
    if (known) out[flat] = fn(args);
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < static_cast<size_t>(out_shape[k].extent())) break;
      index[k] = 0;
    }
  }
  ctx.SetOutputElements(0, std::move(out));
}

}  // namespace nxrt::graph::inference
