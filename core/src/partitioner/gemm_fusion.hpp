// Fusion of a Gemm with the Relu after it into one kernel, so the
// activation is applied to the product as it is stored instead of in
// another pass over memory:
//   Gemm, Relu -> com.microsoft FusedGemm, activation "Relu" (the contrib op
//                 ONNX Runtime fuses the pair into): the Gemm's inputs and
//                 attributes, the Relu's output.
// Only a Gemm of opset 7 or later is fused: FusedGemm broadcasts C as
// Gemm-7 on does. The chain rules and the offer are fusion_chain.hpp's.
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

// Replaces the view of each fused Gemm in `views` (by node id) with one of
// the fused node, marks its Relu in `partition.absorbed` and names the Gemm
// in the Relu's placement; returns one line per fusion.
std::vector<std::string> FuseGemmChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition);

}  // namespace nxrt::partitioner
