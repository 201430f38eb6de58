#include "partitioner/swish_fusion.hpp"

#include <optional>

#include "partitioner/fusion_chain.hpp"

namespace nxrt::partitioner {
namespace {

std::vector<FusionCandidate> SwishCandidates(const graph::Graph& graph, graph::NodeId head,
                                             const ChainRules& rules) {
  const graph::Node& sigmoid = graph.node(head);
  if (sigmoid.inputs.size() != 1 || !sigmoid.inputs[0]) return {};
  const graph::ValueId x = *sigmoid.inputs[0];
  const std::optional<graph::NodeId> mul = rules.Next(head, "Mul");
  if (!mul) return {};
  const graph::Node& mul_node = graph.node(*mul);
  const graph::ValueId gate = *sigmoid.outputs[0];
  // x * sigmoid(x), in either order: the Mul reads x and the gate once each.
  if (mul_node.inputs.size() != 2 || !mul_node.inputs[0] || !mul_node.inputs[1]) return {};
  const graph::ValueId first = *mul_node.inputs[0];
  const graph::ValueId second = *mul_node.inputs[1];
  if (!((first == x && second == gate) || (first == gate && second == x))) return {};
  auto fused = std::make_shared<graph::Node>();
  fused->op_type = "Swish";
  fused->domain = "pkg.nxrt";
  fused->name = sigmoid.name;
  fused->inputs = {x};
  fused->outputs = {mul_node.outputs[0]};
  return {{std::move(fused), {*mul}}};
}

}  // namespace

std::vector<std::string> FuseSwishChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition) {
  return FuseChains(graph, views, providers, capture_plan, partition, "Sigmoid",
                    [&](graph::NodeId head, const ChainRules& rules) {
                      return SwishCandidates(graph, head, rules);
                    });
}

}  // namespace nxrt::partitioner
