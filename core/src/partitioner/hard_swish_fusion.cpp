#include "partitioner/hard_swish_fusion.hpp"

#include <optional>

#include "partitioner/fusion_chain.hpp"

namespace nxrt::partitioner {
namespace {

// Whether `id` is a float32 constant of one element equal to `expected`.
bool IsConstant(const graph::Graph& graph, std::optional<graph::ValueId> id, float expected) {
  return FloatScalar(graph, id) == expected;
}

bool ClipsToZeroAndSix(const graph::Graph& graph, const graph::Node& clip) {
  if (graph.OpsetFor("").value_or(0) < 11) {
    const graph::Attribute* min = clip.FindAttribute("min");
    const graph::Attribute* max = clip.FindAttribute("max");
    return min != nullptr && max != nullptr && min->f == 0.0f && max->f == 6.0f;
  }
  return clip.inputs.size() == 3 && IsConstant(graph, clip.inputs[1], 0.0f) &&
         IsConstant(graph, clip.inputs[2], 6.0f);
}

std::vector<FusionCandidate> HardSwishCandidates(const graph::Graph& graph, graph::NodeId head,
                                                 const ChainRules& rules) {
  const graph::Node& add = graph.node(head);
  if (add.inputs.size() != 2 || !add.inputs[0] || !add.inputs[1]) return {};
  const bool three_second = IsConstant(graph, add.inputs[1], 3.0f);
  if (!three_second && !IsConstant(graph, add.inputs[0], 3.0f)) return {};
  const graph::ValueId x = *add.inputs[three_second ? 0 : 1];
  const graph::Value& x_value = graph.value(x);
  if (x_value.dtype != graph::DataType::kFloat32 || !x_value.shape) return {};
  const std::optional<graph::NodeId> clip = rules.Next(head, "Clip");
  if (!clip || !ClipsToZeroAndSix(graph, graph.node(*clip))) return {};
  const std::optional<graph::NodeId> mul = rules.Next(*clip, "Mul");
  if (!mul || Other(graph.node(*mul), *graph.node(*clip).outputs[0]) != x) return {};
  const std::optional<graph::NodeId> div = rules.Next(*mul, "Div");
  if (!div) return {};
  const graph::Node& div_node = graph.node(*div);
  if (div_node.inputs.size() != 2 || div_node.inputs[0] != graph.node(*mul).outputs[0] ||
      !IsConstant(graph, div_node.inputs[1], 6.0f)) {
    return {};
  }
  // The result has x's shape: no operand broadcast x wider.
  const auto& result = graph.value(*div_node.outputs[0]).shape;
  if (!result || *result != *x_value.shape) return {};
  auto fused = std::make_shared<graph::Node>();
  fused->op_type = "HardSwish";
  fused->domain = "pkg.nxrt";
  fused->name = add.name;
  fused->inputs = {x};
  fused->outputs = {div_node.outputs[0]};
  return {{std::move(fused), {*clip, *mul, *div}}};
}

}  // namespace

std::vector<std::string> FuseHardSwishChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition) {
  return FuseChains(graph, views, providers, capture_plan, partition, "Add",
                    [&](graph::NodeId head, const ChainRules& rules) {
                      return HardSwishCandidates(graph, head, rules);
                    });
}

}  // namespace nxrt::partitioner
