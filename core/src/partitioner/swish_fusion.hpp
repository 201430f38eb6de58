// Fusion of the swish (SiLU) activation that decoder exports spell out in
// two ops, the gate of every Llama, Qwen2 and Mistral MLP:
//   Sigmoid(x), Mul(x, that) -> pkg.nxrt Swish(x) = x * sigmoid(x)
// as one pass over memory instead of two, with nothing of the sigmoid's
// written out. Either operand order of the Mul joins. The chain rules and
// the offer are fusion_chain.hpp's.
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

// Replaces the view of each fused Sigmoid in `views` (by node id) with one
// of the fused node, marks the Mul it took in `partition.absorbed` and names
// the Sigmoid in its placement; returns one line per fusion.
std::vector<std::string> FuseSwishChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition);

}  // namespace nxrt::partitioner
