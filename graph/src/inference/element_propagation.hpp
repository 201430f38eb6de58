// Element-wise evaluation over known element values: the part of constant
// propagation that lets Mul/Add/Sub/Div/Equal/Where/... on small shape
// tensors keep their results as Dims.
#pragma once

#include <functional>
#include <optional>
#include <span>

#include "inference/node_context.hpp"

namespace nxrt::graph::inference {

using ElementFn = std::function<std::optional<Dim>(std::span<const Dim>)>;

// Evaluates `fn` over the broadcast of the node's inputs `inputs` (all with
// static shapes and known elements) and stores the result as output 0's
// elements. Elements the function cannot work out stay unknown. Does nothing
// when some input is not known or the output is too large.
void PropagateElementwise(NodeContext& ctx, std::span<const size_t> inputs, const Shape& out_shape,
                          const ElementFn& fn);

// Whether every dim of `shape` is static; `count` receives their product.
bool StaticCount(const Shape& shape, size_t& count);

}  // namespace nxrt::graph::inference
