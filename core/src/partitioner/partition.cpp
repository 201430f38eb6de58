#include "partitioner/partition.hpp"

#include <utility>

namespace nxrt::partitioner {
namespace {

std::string DomainLabel(const graph::Node& node) {
  return node.domain.empty() ? "ai.onnx" : node.domain;
}

// One line: which node nobody claimed, and each provider's reason.
Status NoClaimerError(const graph::Graph& graph, graph::NodeId id, int64_t opset,
                      const std::vector<ClaimDecline>& declines) {
  const graph::Node& node = graph.node(id);
  std::string message = graph.Describe(id) + " (domain " + DomainLabel(node) + ", opset " +
                        std::to_string(opset) + ") is claimed by no execution provider:";
  for (size_t i = 0; i < declines.size(); ++i) {
    message += (i == 0 ? " " : "; ") + declines[i].provider + " declined: " + declines[i].reason;
  }
  message += "; add a provider that supports " + node.op_type + " to the session's list";
  return Unsupported(std::move(message));
}

}  // namespace

int64_t NodeOpset(const graph::Graph& graph, const graph::Node& node) {
  return graph.OpsetFor(node.domain).value_or(0);
}

Result<Partition> PartitionGraph(
    const graph::Graph& graph, std::span<const std::shared_ptr<const plugin_host::NodeView>> views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan) {
  if (providers.empty()) {
    return InvalidArgument(graph.model_path + ": no execution provider to place nodes on");
  }
  Partition partition;
  partition.provider_of_node.resize(graph.nodes.size());
  partition.placements.resize(graph.nodes.size());
  partition.absorbed.assign(graph.nodes.size(), false);
  partition.opset_of_node.resize(graph.nodes.size());
  for (uint32_t index = 0; index < graph.nodes.size(); ++index) {
    const graph::NodeId id{index};
    const graph::Node& node = graph.node(id);
    const int64_t opset = NodeOpset(graph, node);
    partition.opset_of_node[index] = opset;
    NodePlacement& placement = partition.placements[index];
    placement.node = node.name;
    placement.op_type = node.op_type;
    placement.domain = node.domain;
    placement.capture_eligible = capture_plan.IsEligible(id);
    bool placed = false;
    for (size_t p = 0; p < providers.size() && !placed; ++p) {
      NXRT_ASSIGN_OR_RETURN(const plugin_host::ClaimDecision decision,
                            providers[p].provider->Claim(*views[index], opset));
      if (decision.claimed) {
        placement.provider = providers[p].label;
        partition.provider_of_node[index] = p;
        placed = true;
      } else {
        placement.declines.push_back({providers[p].label, decision.reason});
      }
    }
    if (!placed) return NoClaimerError(graph, id, opset, placement.declines);
  }
  return partition;
}

}  // namespace nxrt::partitioner
