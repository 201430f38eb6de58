// Inference of a body graph (an If branch, a Loop or Scan body, a
// FlexAttention modifier) with the node that holds it. A body is inferred as
// a graph of its own (its symbols live in its own table), with the shapes it
// receives from the node carried in by symbol name; the body's output shapes
// come back the same way, and an extent the two tables do not share becomes
// a fresh minted symbol of the node's graph.
#pragma once

#include <optional>

#include "inference/node_context.hpp"
#include "nxrt/graph/ir.hpp"

namespace nxrt::graph::inference {

// The body held by graph attribute `name` of the node, or null.
Graph* Body(NodeContext& ctx, const char* name);

// Gives body input `index` the node's `dtype`, `kind` and `shape` where the
// body does not declare its own.
void SetInput(NodeContext& ctx, Graph& body, size_t index, DataType dtype,
              std::optional<Shape> shape, ValueKind kind = ValueKind::kTensor);

// Infers `body`, its outer-scope references taking the shapes they have in
// the node's graph. A failure is logged and returned; the body keeps what
// was inferred.
Status InferBody(NodeContext& ctx, Graph& body);

// `value`'s shape (a value of `body`) in the node's graph.
std::optional<Shape> ExportShape(NodeContext& ctx, const Graph& body, const Value& value);

}  // namespace nxrt::graph::inference
