// A node's input element types against its op's ONNX schema: each input's
// type among those its formal parameter accepts, and inputs sharing a type
// parameter of one type. A kernel reads its inputs as the types the schema
// promises (a float16 threshold read as float reads past it), so a node that
// breaks its schema must not reach an EP. Inputs whose type is not known
// yet, sequences and optionals, and ops onnx does not define are not
// checked.
#pragma once

#include "nxrt/graph/ir.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt::graph::inference {

// Ok when the inputs of node `id` fit; otherwise, as a model error naming the
// node, the input, its type and the types the op accepts.
Status CheckInputTypes(const Graph& graph, NodeId id);

}  // namespace nxrt::graph::inference
