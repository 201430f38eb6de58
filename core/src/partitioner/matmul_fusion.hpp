// Fusion of a MatMul with the additions and activation after it into one
// kernel, so they are applied to the product's tiles before it is stored
// instead of as more passes over memory:
//   MatMul, Add[, Relu | Gelu][, Add] -> pkg.nxrt MatMulAdd:
//     inputs A and B (the MatMul's), C (the first Add's other operand) and D
//     (the second Add's, when there is one); "activation" = "Relu" or
//     "Gelu" (with the Gelu's "approximate"); Y = act(A x B + C) + D, the
//     last node's output.
// An Add joins only when its output has the product's inferred shape (C and
// D broadcast into the product, never widen it) and its other operand is
// not the chain's own value and is ready before the MatMul runs (a graph
// input, a constant, or made by an earlier node), since the fused node runs
// in the MatMul's place. The chain rules and the offer are fusion_chain.hpp's;
// the longest chain is offered first, then each shorter one down to MatMul
// and Add.
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

// Replaces the view of each fused MatMul in `views` (by node id) with one of
// the fused node, marks the nodes it took in `partition.absorbed` and names
// the MatMul in their placements; returns one line per fusion.
std::vector<std::string> FuseMatMulChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition);

}  // namespace nxrt::partitioner
