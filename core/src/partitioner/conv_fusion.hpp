// Fusion of a Conv with the nodes after it into one kernel, so they run on
// the convolution's result before it is stored (or, for a pool, before it
// leaves the layout the convolution computed it in) instead of as more
// passes over memory:
//   Conv, Relu | LeakyRelu | Clip (constant bounds) | Sigmoid | HardSigmoid
//   | Tanh                -> com.microsoft FusedConv, "activation" the op's name
//                          and "activation_params" its alpha (and beta), or
//                          Clip's bounds (the contrib op ONNX Runtime fuses
//                          such pairs into);
//   Conv, HardSwish       -> pkg.nxrt FusedConv, activation "HardSwish";
//   Conv, Sigmoid and Mul of the Conv's result and the Sigmoid's (a Swish, as
//   exporters write SiLU) -> pkg.nxrt FusedConv, activation "Swish";
//   Conv[, Relu], MaxPool -> pkg.nxrt ConvPool: the Conv's inputs and
//                          attributes, "activation" = "Relu" when the Relu is
//                          there, and the MaxPool's attributes renamed with a
//                          "pool_" prefix; its output is the MaxPool's.
//
// The chain rules and the offer are fusion_chain.hpp's; the longer fusion
// is tried first.
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

// Replaces the view of each fused Conv in `views` (by node id) with one of
// the fused node, marks the nodes it took in `partition.absorbed` and names
// the Conv in their placements; returns one line per fusion.
std::vector<std::string> FuseConvChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition);

}  // namespace nxrt::partitioner
