// The long tail: ops with no rule of our own are inferred by libonnx's schema
// inference functions, run over our IR through an onnx::InferenceContext.
// Our symbols travel as dim_params and come back as the same symbols; an
// extent the schema returns without a value or a known dim_param becomes a
// fresh Minted symbol.
#pragma once

#include "inference/node_context.hpp"

namespace nxrt::graph::inference {

// Fills the dtype and shape of every output of the node that is still
// unknown. Returns Unknown when libonnx has no schema or its inference fails
// (libonnx errors are caught here and turned into a Status), and
// InvalidArgument when an output's declared dtype is not the one inferred.
Status InferWithOnnxSchema(NodeContext& ctx, KnownValues& known);

}  // namespace nxrt::graph::inference
