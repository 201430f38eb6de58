#include "partitioner/matmul_fusion.hpp"

#include <optional>

#include "partitioner/fusion_chain.hpp"

namespace nxrt::partitioner {
namespace {

// The operand `add` adds to the chain's value `chained`, when the Add may
// join a chain headed by the MatMul `head`.
std::optional<graph::ValueId> Addend(const graph::Graph& graph, graph::NodeId head,
                                     const graph::Node& add, graph::ValueId chained) {
  if (add.inputs.size() != 2 || !add.inputs[0] || !add.inputs[1]) return std::nullopt;
  const graph::ValueId a = *add.inputs[0];
  const graph::ValueId b = *add.inputs[1];
  if (a == b) return std::nullopt;
  const graph::ValueId other = a == chained ? b : a;
  const graph::Value& operand = graph.value(other);
  if (operand.producer.valid() && operand.producer.index >= head.index) return std::nullopt;
  const auto& sum = graph.value(*add.outputs[0]).shape;
  const auto& product = graph.value(chained).shape;
  if (!sum || !product || *sum != *product) return std::nullopt;
  return other;
}

}  // namespace

std::vector<std::string> FuseMatMulChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition) {
  const ChainRules rules(graph, capture_plan, partition);
  std::vector<std::string> fusions;
  for (uint32_t index = 0; index < graph.nodes.size(); ++index) {
    const graph::NodeId head{index};
    const graph::Node& matmul = graph.node(head);
    if (matmul.op_type != "MatMul" || !matmul.is_default_domain() || partition.absorbed[index]) {
      continue;
    }
    const std::optional<graph::NodeId> first = rules.Next(head, "Add");
    if (!first) continue;
    const std::optional<graph::ValueId> c =
        Addend(graph, head, graph.node(*first), *matmul.outputs[0]);
    if (!c) continue;

    // The chain and what each of its nodes adds to the fused node.
    std::vector<graph::NodeId> chain = {*first};
    std::optional<graph::NodeId> activation = rules.Next(*first, "Relu");
    if (!activation) activation = rules.Next(*first, "Gelu");
    if (activation) chain.push_back(*activation);
    std::optional<graph::ValueId> d;
    if (const auto second = rules.Next(chain.back(), "Add")) {
      const graph::Node& add = graph.node(*second);
      d = Addend(graph, head, add, *graph.node(chain.back()).outputs[0]);
      if (d) chain.push_back(*second);
    }

    for (size_t length = chain.size(); length > 0; --length) {
      const std::span<const graph::NodeId> absorbed(chain.data(), length);
      auto fused = std::make_shared<graph::Node>(matmul);
      fused->op_type = "MatMulAdd";
      fused->domain = "pkg.nxrt";
      fused->inputs.push_back(*c);
      fused->outputs = {graph.node(absorbed.back()).outputs[0]};
      if (activation && length > 1) {
        const graph::Node& act = graph.node(*activation);
        fused->attributes.push_back(StringAttribute("activation", act.op_type));
        if (const graph::Attribute* approximate = act.FindAttribute("approximate")) {
          fused->attributes.push_back(*approximate);
        }
      }
      if (d && length == chain.size()) fused->inputs.push_back(*d);
      std::optional<std::string> line =
          OfferFusion(graph, head, std::move(fused), absorbed, views, providers, partition);
      if (line) {
        fusions.push_back(std::move(*line));
        break;
      }
    }
  }
  return fusions;
}

}  // namespace nxrt::partitioner
