// A node's inputs and outputs against the count its op's ONNX schema allows,
// checked when the model loads: a kernel indexes its required inputs without
// asking, so a node short of one (or naming none for it) must not reach an
// EP. The counts come from onnx's own schemas (schema/onnx_op_schema.hpp);
// ops onnx does not define (contrib domains, model-local functions) are left
// to the EP that claims them.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>

#include "nxrt/support/status.hpp"

namespace nxrt::graph {

// Ok when `node` fits its op's schema at `opset` of `domain`, or when onnx
// defines no such op there; otherwise what is wrong and what to do, without
// the node's label (the caller prefixes it).
Status CheckNodeArity(const onnx::NodeProto& node, const std::string& domain, int64_t opset);

}  // namespace nxrt::graph
