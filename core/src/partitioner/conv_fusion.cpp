#include "partitioner/conv_fusion.hpp"

#include <optional>

#include "partitioner/fusion_chain.hpp"

namespace nxrt::partitioner {
namespace {

std::shared_ptr<graph::Node> FusedFrom(const graph::Node& conv, const graph::Node& last,
                                       const char* domain, const char* op, bool relu) {
  auto fused = std::make_shared<graph::Node>(conv);
  fused->op_type = op;
  fused->domain = domain;
  fused->outputs = {last.outputs[0]};
  if (relu) fused->attributes.push_back(StringAttribute("activation", "Relu"));
  return fused;
}

std::vector<FusionCandidate> ConvCandidates(const graph::Graph& graph, graph::NodeId conv_id,
                                            const ChainRules& rules) {
  const graph::Node& conv = graph.node(conv_id);
  const std::optional<graph::NodeId> relu = rules.Next(conv_id, "Relu");
  const std::optional<graph::NodeId> pool = rules.Next(relu.value_or(conv_id), "MaxPool");
  std::vector<FusionCandidate> candidates;
  if (pool) {
    const graph::Node& pool_node = graph.node(*pool);
    auto fused = FusedFrom(conv, pool_node, "pkg.nxrt", "ConvPool", relu.has_value());
    for (graph::Attribute a : pool_node.attributes) {
      a.name = "pool_" + a.name;
      fused->attributes.push_back(std::move(a));
    }
    FusionCandidate& c = candidates.emplace_back(FusionCandidate{std::move(fused), {}});
    if (relu) c.absorbed.push_back(*relu);
    c.absorbed.push_back(*pool);
  }
  if (relu) {
    candidates.push_back(
        {FusedFrom(conv, graph.node(*relu), "com.microsoft", "FusedConv", true), {*relu}});
  }
  return candidates;
}

}  // namespace

std::vector<std::string> FuseConvChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition) {
  return FuseChains(graph, views, providers, capture_plan, partition, "Conv",
                    [&](graph::NodeId head, const ChainRules& rules) {
                      return ConvCandidates(graph, head, rules);
                    });
}

}  // namespace nxrt::partitioner
