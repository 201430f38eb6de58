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

// The whole chain first, then each shorter one down to the MatMul and its
// first Add.
std::vector<FusionCandidate> MatMulCandidates(const graph::Graph& graph, graph::NodeId head,
                                              const ChainRules& rules) {
  const graph::Node& matmul = graph.node(head);
  const std::optional<graph::NodeId> first = rules.Next(head, "Add");
  if (!first) return {};
  const std::optional<graph::ValueId> c =
      Addend(graph, head, graph.node(*first), *matmul.outputs[0]);
  if (!c) return {};

  std::vector<graph::NodeId> chain = {*first};
  std::optional<graph::NodeId> activation = rules.Next(*first, "Relu");
  if (!activation) activation = rules.Next(*first, "Gelu");
  if (activation) chain.push_back(*activation);
  std::optional<graph::ValueId> d;
  if (const auto second = rules.Next(chain.back(), "Add")) {
    d = Addend(graph, head, graph.node(*second), *graph.node(chain.back()).outputs[0]);
    if (d) chain.push_back(*second);
  }

  std::vector<FusionCandidate> candidates;
  for (size_t length = chain.size(); length > 0; --length) {
    auto fused = std::make_shared<graph::Node>(matmul);
    fused->op_type = "MatMulAdd";
    fused->domain = "pkg.nxrt";
    fused->inputs.push_back(*c);
    fused->outputs = {graph.node(chain[length - 1]).outputs[0]};
    if (activation && length > 1) {
      const graph::Node& act = graph.node(*activation);
      fused->attributes.push_back(StringAttribute("activation", act.op_type));
      if (const graph::Attribute* approximate = act.FindAttribute("approximate")) {
        fused->attributes.push_back(*approximate);
      }
    }
    if (d && length == chain.size()) fused->inputs.push_back(*d);
    candidates.push_back({std::move(fused), {chain.begin(), chain.begin() + length}});
  }
  return candidates;
}

}  // namespace

std::vector<std::string> FuseMatMulChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition) {
  return FuseChains(graph, views, providers, capture_plan, partition, "MatMul",
                    [&](graph::NodeId head, const ChainRules& rules) {
                      return MatMulCandidates(graph, head, rules);
                    });
}

}  // namespace nxrt::partitioner
