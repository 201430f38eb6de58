// Fusion of the product ONNX Runtime's dynamic quantizer writes after each
// DynamicQuantizeLinear, an integer product brought back to float in three
// more passes over its result:
//   MatMulInteger(A, B, a_zero, b_zero) -> Cast(to float)
//     -> Mul(., Mul(a_scale, b_scale)) [-> Add(., bias)]
// into com.microsoft MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zero,
// b_zero[, bias]), the contrib op ONNX Runtime fuses it into:
// Y = float(sum) * (a_scale * b_scale) + bias, the same float steps. a_scale
// is the scale product's factor of one element, b_scale the other (one, or
// one per column of B); a bias is a float32 constant of one value per
// column. The scale product's Mul joins when the chain alone reads it; an
// Add that does not fit leaves the chain at the Mul. The chain rules and
// the offer are fusion_chain.hpp's; a decline leaves the nodes as they are.
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

// Replaces the view of each fused MatMulInteger in `views` (by node id)
// with one of the fused node and marks the nodes it takes in
// `partition.absorbed`; returns one line per fusion.
std::vector<std::string> FuseIntegerMatMulChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition);

}  // namespace nxrt::partitioner
