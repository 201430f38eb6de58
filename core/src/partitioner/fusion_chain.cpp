#include "partitioner/fusion_chain.hpp"

#include "nxrt/support/log.hpp"

namespace nxrt::partitioner {
namespace {

constexpr int64_t kFusedOpset = 1;

std::string Label(const graph::Node& node) {
  return node.domain.empty() ? node.op_type : node.domain + "::" + node.op_type;
}

// Offers `candidate` in place of `head`; on a claim applies it and returns
// the line that reports it.
std::optional<std::string> Offer(const graph::Graph& graph, graph::NodeId head,
                                 const FusionCandidate& candidate,
                                 std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
                                 std::span<const RankedProvider> providers, Partition& partition) {
  const size_t provider = partition.provider_of_node[head.index];
  auto view = std::make_shared<const plugin_host::NodeView>(graph, head, candidate.node);
  Result<plugin_host::ClaimDecision> claim =
      providers[provider].provider->Claim(*view, kFusedOpset);
  if (!claim.ok()) {
    GetLogger()->warn("{}; the nodes stay apart", claim.status().message());
    return std::nullopt;
  }
  if (!claim->claimed) return std::nullopt;
  const graph::Node& head_node = graph.node(head);
  std::string line = head_node.op_type + " '" + head_node.name + "'";
  const std::vector<graph::NodeId>& absorbed = candidate.absorbed;
  for (size_t i = 0; i < absorbed.size(); ++i) {
    const graph::Node& taken = graph.node(absorbed[i]);
    partition.absorbed[absorbed[i].index] = true;
    partition.placements[absorbed[i].index].fused_into = head_node.name;
    line += (i + 1 == absorbed.size() ? " and " : ", ") + taken.op_type + " '" + taken.name + "'";
  }
  views[head.index] = std::move(view);
  partition.opset_of_node[head.index] = kFusedOpset;
  return line + " fused as " + Label(*candidate.node) + " on " + providers[provider].label;
}

}  // namespace

ChainRules::ChainRules(const graph::Graph& graph, const graph::CapturePlan& capture_plan,
                       const Partition& partition)
    : graph_(graph),
      capture_plan_(capture_plan),
      partition_(partition),
      consumers_(graph),
      outer_reads_(graph::OuterScopeReads(graph)) {
  for (graph::ValueId id : graph.outputs) outputs_.insert(id.index);
}

std::optional<graph::NodeId> ChainRules::Next(graph::NodeId last, std::string_view op) const {
  const graph::Node& node = graph_.node(last);
  if (!HasOneOutput(node)) return std::nullopt;
  const graph::ValueId between = *node.outputs[0];
  const auto readers = consumers_.Of(between);
  if (readers.size() != 1 || outputs_.contains(between.index) ||
      outer_reads_.contains(graph_.value(between).name)) {
    return std::nullopt;
  }
  const graph::NodeId next = readers[0].node;
  const graph::Node& candidate = graph_.node(next);
  if (candidate.op_type != op || !candidate.is_default_domain() || !HasOneOutput(candidate) ||
      partition_.absorbed[next.index] ||
      partition_.provider_of_node[next.index] != partition_.provider_of_node[last.index] ||
      capture_plan_.IsEligible(next) != capture_plan_.IsEligible(last)) {
    return std::nullopt;
  }
  return next;
}

bool ChainRules::HasOneOutput(const graph::Node& node) {
  if (node.outputs.empty() || !node.outputs[0]) return false;
  for (size_t i = 1; i < node.outputs.size(); ++i) {
    if (node.outputs[i]) return false;
  }
  return true;
}

graph::Attribute StringAttribute(const std::string& name, const std::string& value) {
  graph::Attribute a;
  a.name = name;
  a.type = graph::AttributeType::kString;
  a.s = value;
  return a;
}

std::vector<std::string> FuseChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition, std::string_view head_op, const ChainProposer& propose) {
  const ChainRules rules(graph, capture_plan, partition);
  std::vector<std::string> fusions;
  for (uint32_t index = 0; index < graph.nodes.size(); ++index) {
    const graph::NodeId head{index};
    const graph::Node& head_node = graph.node(head);
    if (head_node.op_type != head_op || !head_node.is_default_domain() ||
        partition.absorbed[index]) {
      continue;
    }
    for (const FusionCandidate& candidate : propose(head, rules)) {
      if (std::optional<std::string> line =
              Offer(graph, head, candidate, views, providers, partition)) {
        fusions.push_back(std::move(*line));
        break;
      }
    }
  }
  return fusions;
}

}  // namespace nxrt::partitioner
