// A node's attributes against those its op's ONNX schema knows, checked when
// the model loads: every required attribute present, every attribute of the
// type the op reads, none the op does not know. onnx's own shape inference
// reads a required attribute without asking (Scan without a body crashes
// it), and a misspelt optional one would silently take its default. The
// attributes come from onnx's schemas (schema/onnx_op_schema.hpp); ops onnx
// does not define are left to the EP that claims them.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>

#include "nxrt/support/status.hpp"

namespace nxrt::graph {

// Ok when `node`'s attributes fit its op's schema at `opset` of `domain`, or
// when onnx defines no such op there; otherwise what is wrong and what to do,
// without the node's label (the caller prefixes it). Names starting with
// "__" are reserved for tools and pass unchecked, as onnx's checker lets them.
Status CheckNodeAttributes(const onnx::NodeProto& node, const std::string& domain, int64_t opset);

}  // namespace nxrt::graph
