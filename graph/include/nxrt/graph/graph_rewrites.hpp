// Rewrites of a loaded graph that keep its meaning and save work at run
// time, applied before shape inference. Each returns one line per change for
// `nxrt inspect`, naming the nodes it touched.
#pragma once

#include <string>
#include <vector>

#include "nxrt/graph/ir.hpp"

namespace nxrt::graph {

// Turns each default-domain Constant node whose value is a numeric tensor
// and whose output is no graph output into an initializer of that value, as
// ONNX Runtime does at load, in the graph and in every If, Loop and Scan
// body: exporters such as paddle2onnx write every weight as a Constant node
// (and Silero's VAD inside its If branches), and only an initializer is a
// constant input a kernel prepares once instead of a copy made every run.
// An Identity of such a constant (an initializer no run replaces) names the
// same tensor instead (TorchScript exports hold one for each shared weight).
// Returns one line counting them, or none.
std::vector<std::string> ConstantNodesToInitializers(Graph& graph);

// Folds an inference-mode BatchNormalization into the Conv before it when
// the Conv's weights and bias and all four statistics are float32
// initializers that no run can override, and the Conv's output feeds nothing
// else (no other node, subgraph or graph output). The Conv then produces the
// BatchNormalization's output with weights W * s and bias (B - mean) * s +
// shift, s = scale / sqrt(var + epsilon), computed in double; the original
// initializers stay for any other reader.
std::vector<std::string> FoldBatchNormalizationIntoConv(Graph& graph);

}  // namespace nxrt::graph
