// What the host's node fusions (conv_fusion.hpp, matmul_fusion.hpp) share:
// the rule for which node may join a chain, and the offer of a fused node to
// the provider that placed the chain.
//
// A node joins when it alone reads the previous node's only output (no other
// node, subgraph or graph output reads it), has one output itself, and was
// placed on the same provider with the same capture eligibility. The fused
// node takes the head's place (its id, view and slot in the plan); the other
// nodes are absorbed. The provider must claim the fused node at the chain's
// inferred shapes; a decline or a failed claim leaves the nodes as they are.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "nxrt/graph/capture_classifier.hpp"
#include "nxrt/graph/ir.hpp"
#include "nxrt/graph/value_consumers.hpp"
#include "partitioner/partition.hpp"
#include "plugin_host/node_view.hpp"

namespace nxrt::partitioner {

class ChainRules {
 public:
  // All three must outlive the rules.
  ChainRules(const graph::Graph& graph, const graph::CapturePlan& capture_plan,
             const Partition& partition);

  // The node of default-domain `op` that may join the chain ending at `last`.
  std::optional<graph::NodeId> Next(graph::NodeId last, std::string_view op) const;

 private:
  static bool HasOneOutput(const graph::Node& node);

  const graph::Graph& graph_;
  const graph::CapturePlan& capture_plan_;
  const Partition& partition_;
  const graph::ValueConsumers consumers_;
  const std::unordered_set<std::string> outer_reads_;
  std::unordered_set<uint32_t> outputs_;
};

// A string attribute, for the fused node's settings.
graph::Attribute StringAttribute(const std::string& name, const std::string& value);

// Offers `fused` in place of `head` and the `absorbed` nodes to the provider
// that placed `head`, at opset 1 of the fused node's domain. On a claim,
// replaces head's view in `views`, marks the absorbed nodes in `partition`
// (naming head in their placements) and returns the line that reports the
// fusion; otherwise returns nullopt and changes nothing.
std::optional<std::string> OfferFusion(
    const graph::Graph& graph, graph::NodeId head, std::shared_ptr<const graph::Node> fused,
    std::span<const graph::NodeId> absorbed,
    std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, Partition& partition);

}  // namespace nxrt::partitioner
