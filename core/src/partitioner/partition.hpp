// The partitioner: places each node of a graph on the first execution
// provider, in priority order, that claims it at the node's inferred (possibly
// symbolic) shapes.
//
// Declines are kept with the provider and its reason for `nxrt inspect`. A
// node that no provider claims fails the whole partition with one line naming
// the node, op, domain, opset and every provider's reason, because running
// with a hole in the graph is never what the user wants.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nxrt/graph/capture_classifier.hpp"
#include "nxrt/graph/ir.hpp"
#include "nxrt/session_report.hpp"
#include "nxrt/support/status.hpp"
#include "plugin_host/execution_provider.hpp"
#include "plugin_host/node_view.hpp"

namespace nxrt::partitioner {

// A provider in priority order, with the label that names it in reports.
struct RankedProvider {
  std::shared_ptr<plugin_host::ExecutionProvider> provider;
  std::string label;  // "mock#2": plugin name and priority position
};

struct Partition {
  std::vector<size_t> provider_of_node;   // index into the providers, by node id
  std::vector<NodePlacement> placements;  // by node id
  std::vector<bool> absorbed;             // by node id: runs inside another node's kernel
  std::vector<int64_t> opset_of_node;     // by node id: of the op its kernel is made for
};

// Opset version in force for `node`'s domain, 0 when the model imports none.
int64_t NodeOpset(const graph::Graph& graph, const graph::Node& node);

// `views` holds one node view per node of `graph`, by node id.
Result<Partition> PartitionGraph(
    const graph::Graph& graph, std::span<const std::shared_ptr<const plugin_host::NodeView>> views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan);

}  // namespace nxrt::partitioner
