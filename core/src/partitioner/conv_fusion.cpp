#include "partitioner/conv_fusion.hpp"

#include <optional>
#include <string_view>
#include <unordered_set>

#include "nxrt/graph/value_consumers.hpp"
#include "nxrt/support/log.hpp"

namespace nxrt::partitioner {
namespace {

constexpr int64_t kFusedOpset = 1;

// What decides whether node `next` may join the chain ending at `last`.
class ChainRules {
 public:
  ChainRules(const graph::Graph& graph, const graph::CapturePlan& capture_plan,
             const Partition& partition)
      : graph_(graph),
        capture_plan_(capture_plan),
        partition_(partition),
        consumers_(graph),
        outer_reads_(graph::OuterScopeReads(graph)) {
    for (graph::ValueId id : graph.outputs) outputs_.insert(id.index);
  }

  // The node of default-domain `op` that alone reads `last`'s only output,
  // with one present output, on the same provider and equally capturable.
  std::optional<graph::NodeId> Next(graph::NodeId last, std::string_view op) const {
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
        partition_.provider_of_node[next.index] != partition_.provider_of_node[last.index] ||
        capture_plan_.IsEligible(next) != capture_plan_.IsEligible(last)) {
      return std::nullopt;
    }
    return next;
  }

 private:
  static bool HasOneOutput(const graph::Node& node) {
    if (node.outputs.empty() || !node.outputs[0]) return false;
    for (size_t i = 1; i < node.outputs.size(); ++i) {
      if (node.outputs[i]) return false;
    }
    return true;
  }

  const graph::Graph& graph_;
  const graph::CapturePlan& capture_plan_;
  const Partition& partition_;
  const graph::ValueConsumers consumers_;
  const std::unordered_set<std::string> outer_reads_;
  std::unordered_set<uint32_t> outputs_;
};

// A fused node to offer: what it is and which nodes it takes after the Conv.
struct Candidate {
  std::shared_ptr<const graph::Node> node;
  std::vector<graph::NodeId> absorbed;
};

graph::Attribute StringAttribute(const std::string& name, const std::string& value) {
  graph::Attribute a;
  a.name = name;
  a.type = graph::AttributeType::kString;
  a.s = value;
  return a;
}

std::shared_ptr<graph::Node> FusedFrom(const graph::Node& conv, const graph::Node& last,
                                       const char* domain, const char* op, bool relu) {
  auto fused = std::make_shared<graph::Node>(conv);
  fused->op_type = op;
  fused->domain = domain;
  fused->outputs = {last.outputs[0]};
  if (relu) fused->attributes.push_back(StringAttribute("activation", "Relu"));
  return fused;
}

std::string Label(const graph::Node& node) {
  return node.domain.empty() ? node.op_type : node.domain + "::" + node.op_type;
}

}  // namespace

std::vector<std::string> FuseConvChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition) {
  const ChainRules rules(graph, capture_plan, partition);
  std::vector<std::string> fusions;
  for (uint32_t index = 0; index < graph.nodes.size(); ++index) {
    const graph::NodeId conv_id{index};
    const graph::Node& conv = graph.node(conv_id);
    if (conv.op_type != "Conv" || !conv.is_default_domain() || partition.absorbed[index]) continue;
    const std::optional<graph::NodeId> relu = rules.Next(conv_id, "Relu");
    const std::optional<graph::NodeId> pool = rules.Next(relu.value_or(conv_id), "MaxPool");

    std::vector<Candidate> candidates;
    if (pool) {
      const graph::Node& pool_node = graph.node(*pool);
      auto fused = FusedFrom(conv, pool_node, "pkg.nxrt", "ConvPool", relu.has_value());
      for (graph::Attribute a : pool_node.attributes) {
        a.name = "pool_" + a.name;
        fused->attributes.push_back(std::move(a));
      }
      Candidate& c = candidates.emplace_back(Candidate{std::move(fused), {}});
      if (relu) c.absorbed.push_back(*relu);
      c.absorbed.push_back(*pool);
    }
    if (relu) {
      candidates.push_back(
          {FusedFrom(conv, graph.node(*relu), "com.microsoft", "FusedConv", true), {*relu}});
    }

    const size_t provider = partition.provider_of_node[index];
    for (Candidate& candidate : candidates) {
      auto view = std::make_shared<const plugin_host::NodeView>(graph, conv_id, candidate.node);
      Result<plugin_host::ClaimDecision> claim =
          providers[provider].provider->Claim(*view, kFusedOpset);
      if (!claim.ok()) {
        GetLogger()->warn("{}; the nodes stay apart", claim.status().message());
        continue;
      }
      if (!claim->claimed) continue;
      std::string line = "Conv '" + conv.name + "'";
      for (size_t i = 0; i < candidate.absorbed.size(); ++i) {
        const graph::NodeId id = candidate.absorbed[i];
        const graph::Node& taken = graph.node(id);
        partition.absorbed[id.index] = true;
        partition.placements[id.index].fused_into = conv.name;
        line += (i + 1 == candidate.absorbed.size() ? " and " : ", ") + taken.op_type + " '" +
                taken.name + "'";
      }
      fusions.push_back(line + " fused as " + Label(*candidate.node) + " on " +
                        providers[provider].label);
      views[index] = std::move(view);
      partition.opset_of_node[index] = kFusedOpset;
      break;
    }
  }
  return fusions;
}

}  // namespace nxrt::partitioner
