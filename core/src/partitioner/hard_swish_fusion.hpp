// Fusion of the hard-swish activation that exporters spell out in four ops
// (paddle2onnx's MobileNetV3 and PP-LCNet blocks, older torch exports):
//   Add(x, 3), Clip(0, 6), Mul(x, that), Div(that, 6) -> pkg.nxrt HardSwish(x)
// with ONNX HardSwish's meaning, x * max(0, min(1, x / 6 + 1 / 2)), as one
// pass over memory instead of four. The constants must be float32
// initializers no run can replace; either operand order of the Add and the
// Mul joins. The chain rules and the offer are fusion_chain.hpp's.
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

// Replaces the view of each fused Add in `views` (by node id) with one of
// the fused node, marks the nodes it took in `partition.absorbed` and names
// the Add in their placements; returns one line per fusion.
std::vector<std::string> FuseHardSwishChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition);

}  // namespace nxrt::partitioner
