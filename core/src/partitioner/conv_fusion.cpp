#include "partitioner/conv_fusion.hpp"

#include <optional>

#include "partitioner/fusion_chain.hpp"

namespace nxrt::partitioner {
namespace {

// A fused node to offer: what it is and which nodes it takes after the Conv.
struct Candidate {
  std::shared_ptr<const graph::Node> node;
  std::vector<graph::NodeId> absorbed;
};

std::shared_ptr<graph::Node> FusedFrom(const graph::Node& conv, const graph::Node& last,
                                       const char* domain, const char* op, bool relu) {
  auto fused = std::make_shared<graph::Node>(conv);
  fused->op_type = op;
  fused->domain = domain;
  fused->outputs = {last.outputs[0]};
  if (relu) fused->attributes.push_back(StringAttribute("activation", "Relu"));
  return fused;
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
    for (Candidate& candidate : candidates) {
      std::optional<std::string> line = OfferFusion(
          graph, conv_id, candidate.node, candidate.absorbed, views, providers, partition);
      if (line) {
        fusions.push_back(std::move(*line));
        break;
      }
    }
  }
  return fusions;
}

}  // namespace nxrt::partitioner
