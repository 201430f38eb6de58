// Fusion of the exact GELU that exporters spell out in five ops before ONNX
// had Gelu (torch.onnx's TorchScript exporter below opset 20, for BERT, ViT,
// Whisper and wav2vec2 alike):
//   Div(x, sqrt 2) or Mul(x, 1 / sqrt 2), Erf, Add(that, 1), Mul(x, that),
//   Mul(that, 0.5)                        -> pkg.nxrt Gelu(x)
// with ONNX Gelu's meaning (approximate "none"), x * (1 + erf(x / sqrt 2)) / 2,
// as one pass over memory instead of five. The constants must be float32
// initializers no run can replace (sqrt 2 and its inverse to float
// precision); either operand order of the Add and the Muls joins. The chain
// rules and the offer are fusion_chain.hpp's.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nxrt/graph/capture_classifier.hpp"
#include "nxrt/graph/ir.hpp"
#include "partitioner/partition.hpp"
#include "plugin_host/node_view.hpp"

namespace nxrt::partitioner {

// Replaces the view of each fused Div or Mul in `views` (by node id) with one
// of the fused node, marks the nodes it took in `partition.absorbed` and
// names the head in their placements; returns one line per fusion.
std::vector<std::string> FuseGeluChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition);

}  // namespace nxrt::partitioner
