// Fusion of a Conv with the Relu after it into one com.microsoft FusedConv
// node (activation "Relu"), the contrib op ONNX Runtime fuses the pair into,
// so the activation runs inside the convolution instead of as another pass
// over its output.
//
// A pair fuses when the Conv's only output is read by the Relu alone (no
// other node, subgraph or graph output reads it), both were placed on the
// same provider with the same capture eligibility, and that provider claims
// the fused node at the pair's inferred shapes. Anything else, a failed
// claim included, leaves the pair as it is: fusion only ever saves work.
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
// the FusedConv node, marks its Relu in `partition.absorbed` and names the
// Conv in the Relu's placement; returns one line per fusion.
std::vector<std::string> FuseConvActivations(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition);

}  // namespace nxrt::partitioner
