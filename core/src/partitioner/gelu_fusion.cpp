#include "partitioner/gelu_fusion.hpp"

#include <cmath>
#include <optional>

#include "partitioner/fusion_chain.hpp"

namespace nxrt::partitioner {
namespace {

// Whether `id` is a float32 constant of one element within float rounding
// of `expected`.
bool IsNear(const graph::Graph& graph, std::optional<graph::ValueId> id, double expected) {
  const std::optional<float> value = FloatScalar(graph, id);
  return value && std::abs(static_cast<double>(*value) - expected) <= 1e-6 * expected;
}

// x when `head` is x / sqrt 2 (a Div) or x * (1 / sqrt 2) (a Mul, either order).
std::optional<graph::ValueId> ScaledInput(const graph::Graph& graph, const graph::Node& head) {
  if (head.inputs.size() != 2 || !head.inputs[0] || !head.inputs[1]) return std::nullopt;
  if (head.op_type == "Div") {
    if (!IsNear(graph, head.inputs[1], std::sqrt(2.0))) return std::nullopt;
    return head.inputs[0];
  }
  for (size_t i = 0; i < 2; ++i) {
    if (IsNear(graph, head.inputs[1 - i], std::sqrt(0.5))) return head.inputs[i];
  }
  return std::nullopt;
}

std::vector<FusionCandidate> GeluCandidates(const graph::Graph& graph, graph::NodeId head,
                                            const ChainRules& rules) {
  const graph::Node& scale = graph.node(head);
  const std::optional<graph::ValueId> x = ScaledInput(graph, scale);
  if (!x) return {};
  const graph::Value& x_value = graph.value(*x);
  if (x_value.dtype != graph::DataType::kFloat32 || !x_value.shape) return {};
  const std::optional<graph::NodeId> erf = rules.Next(head, "Erf");
  if (!erf) return {};
  const std::optional<graph::NodeId> add = rules.Next(*erf, "Add");
  if (!add || !IsNear(graph, Other(graph.node(*add), *graph.node(*erf).outputs[0]), 1.0)) {
    return {};
  }
  const std::optional<graph::NodeId> gate = rules.Next(*add, "Mul");
  if (!gate || Other(graph.node(*gate), *graph.node(*add).outputs[0]) != x) return {};
  const std::optional<graph::NodeId> half = rules.Next(*gate, "Mul");
  if (!half || !IsNear(graph, Other(graph.node(*half), *graph.node(*gate).outputs[0]), 0.5)) {
    return {};
  }
  // The result has x's shape: no operand broadcast x wider.
  const graph::ValueId y = *graph.node(*half).outputs[0];
  const auto& result = graph.value(y).shape;
  if (!result || *result != *x_value.shape) return {};
  auto fused = std::make_shared<graph::Node>();
  fused->op_type = "Gelu";
  fused->domain = "pkg.nxrt";
  fused->name = scale.name;
  fused->inputs = {*x};
  fused->outputs = {y};
  return {{std::move(fused), {*erf, *add, *gate, *half}}};
}

}  // namespace

std::vector<std::string> FuseGeluChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition) {
  std::vector<std::string> fusions;
  for (const char* head_op : {"Div", "Mul"}) {
    for (std::string& line : FuseChains(graph, views, providers, capture_plan, partition, head_op,
                                        [&](graph::NodeId head, const ChainRules&rules) {
                                          return GeluCandidates(graph, head, rules);
                                        })) {
      fusions.push_back(std::move(line));
    }
  }
  return fusions;
}

}  // namespace nxrt::partitioner
