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

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
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

  // The default-domain `op` node that makes input `input` of `node`, if any
  // (a fused node may read the producer's inputs in its place).
  std::optional<graph::NodeId> Producer(graph::NodeId node, size_t input,
                                        std::string_view op) const;
  // Whether a fused node in `reader`'s place may absorb `producer`: by the
  // rule chains join by, `reader` alone reads its output (a producer of
  // constants alone, such as a weight's DequantizeLinear, joins whatever
  // its reader's capture eligibility).
  bool MayAbsorb(graph::NodeId producer, graph::NodeId reader) const;

  // The default-domain `gate_op` and `combine_op` nodes that may join the
  // chain ending at `last` together: they alone read its only output, the
  // gate (one input) feeds the combine alone, and the combine reads `last`'s
  // output and the gate's, in either order (Sigmoid and Mul make a Swish).
  std::optional<std::pair<graph::NodeId, graph::NodeId>> GatedBy(graph::NodeId last,
                                                                 std::string_view gate_op,
                                                                 std::string_view combine_op) const;

 private:
  static bool HasOneOutput(const graph::Node& node);
  // Whether `node`'s one output is read by `reader` alone, and nothing
  // outside the node list (a graph output, a subgraph) reads it.
  bool ReadOnlyBy(graph::NodeId node, graph::NodeId reader) const;

  const graph::Graph& graph_;
  const graph::CapturePlan& capture_plan_;
  const Partition& partition_;
  const graph::ValueConsumers consumers_;
  const std::unordered_set<std::string> outer_reads_;
  std::unordered_set<uint32_t> outputs_;
};

// A string attribute, for the fused node's settings.
graph::Attribute StringAttribute(const std::string& name, const std::string& value);
// An integer attribute, likewise.
graph::Attribute IntAttribute(const std::string& name, int64_t value);
// A list-of-floats attribute, likewise.
graph::Attribute FloatsAttribute(const std::string& name, std::vector<float> values);

// The element count of `id` when its shape is static, else nullopt.
std::optional<int64_t> StaticCount(const graph::Graph& graph, graph::ValueId id);

// The value of `id` when it is a float32 constant of one element.
std::optional<float> FloatScalar(const graph::Graph& graph, std::optional<graph::ValueId> id);

// The operand of a two-input node other than `known`, when one of its two
// inputs is `known` (either order of a commutative op).
std::optional<graph::ValueId> Other(const graph::Node& node, graph::ValueId known);

// A fused node to offer in place of a chain's head, and the nodes after the
// head that it takes.
struct FusionCandidate {
  std::shared_ptr<const graph::Node> node;
  std::vector<graph::NodeId> absorbed;
};

// The fused nodes to offer for the chain headed by `head`, in order of
// preference; empty when there is no chain.
using ChainProposer =
    std::function<std::vector<FusionCandidate>(graph::NodeId head, const ChainRules& rules)>;

// For each node of default-domain `head_op` not already absorbed, offers the
// proposed candidates, in order, to the provider that placed the head, at
// opset 1 of the fused node's domain, until one is claimed. A claim replaces
// the head's view in `views` and marks the absorbed nodes in `partition`
// (naming the head in their placements). Returns one line per fusion.
std::vector<std::string> FuseChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition, std::string_view head_op, const ChainProposer& propose);

}  // namespace nxrt::partitioner
