#include "partitioner/integer_matmul_fusion.hpp"

#include <optional>
#include <utility>

#include "partitioner/fusion_chain.hpp"

namespace nxrt::partitioner {
namespace {

using graph::NodeId;
using graph::ValueId;

constexpr int64_t kFloatType = 1;  // TensorProto.FLOAT

// The columns of MatMulInteger's B, when static.
std::optional<int64_t> Columns(const graph::Graph& graph, const graph::Node& product) {
  const std::optional<graph::Shape>& b = graph.value(*product.inputs[1]).shape;
  if (!b || b->size() < 2 || !b->back().is_static()) return std::nullopt;
  return b->back().extent();
}

std::vector<FusionCandidate> Candidates(const graph::Graph& graph, NodeId head,
                                        const ChainRules& rules) {
  const graph::Node& product = graph.node(head);
  if (product.inputs.size() < 2 || !product.inputs[0] || !product.inputs[1]) return {};
  const std::optional<NodeId> cast = rules.Next(head, "Cast");
  const graph::Attribute* to = cast ? graph.node(*cast).FindAttribute("to") : nullptr;
  if (to == nullptr || to->i != kFloatType) return {};
  const std::optional<NodeId> mul = rules.Next(*cast, "Mul");
  if (!mul) return {};
  const std::optional<ValueId> factor = Other(graph.node(*mul), *graph.node(*cast).outputs[0]);
  const std::optional<int64_t> columns = Columns(graph, product);
  if (!factor || !columns) return {};
  // The factor is Mul(a_scale, b_scale), one of them a single value.
  const NodeId scaling = graph.value(*factor).producer;
  if (!scaling.valid()) return {};
  const graph::Node& scales = graph.node(scaling);
  if (scales.op_type != "Mul" || !scales.is_default_domain() || scales.inputs.size() != 2 ||
      !scales.inputs[0] || !scales.inputs[1]) {
    return {};
  }
  ValueId a_scale = *scales.inputs[0], b_scale = *scales.inputs[1];
  if (StaticCount(graph, a_scale) != 1) std::swap(a_scale, b_scale);
  const std::optional<int64_t> b_count = StaticCount(graph, b_scale);
  if (StaticCount(graph, a_scale) != 1 || (b_count != 1 && b_count != columns) ||
      graph.value(a_scale).dtype != graph::DataType::kFloat32 ||
      graph.value(b_scale).dtype != graph::DataType::kFloat32) {
    return {};
  }
  std::vector<NodeId> absorbed = {*cast, *mul};
  if (rules.MayAbsorb(scaling, *mul)) absorbed.push_back(scaling);
  const auto fused = [&](std::optional<ValueId> bias, ValueId output) {
    auto node = std::make_shared<graph::Node>(product);
    node->op_type = "MatMulIntegerToFloat";
    node->domain = "com.microsoft";
    const auto input = [&](size_t i) {
      return i < product.inputs.size() ? product.inputs[i] : std::nullopt;
    };
    node->inputs = {product.inputs[0], product.inputs[1], a_scale, b_scale, input(2), input(3)};
    if (bias) node->inputs.push_back(*bias);
    node->outputs = {output};
    return node;
  };
  std::vector<FusionCandidate> candidates;
  const std::optional<NodeId> add = rules.Next(*mul, "Add");
  if (add) {
    const std::optional<ValueId> bias = Other(graph.node(*add), *graph.node(*mul).outputs[0]);
    const std::optional<graph::Shape>& shape = bias ? graph.value(*bias).shape : std::nullopt;
    if (bias && graph.value(*bias).is_constant() &&
        graph.value(*bias).dtype == graph::DataType::kFloat32 && shape && shape->size() == 1 &&
        StaticCount(graph, *bias) == columns) {
      std::vector<NodeId> with_add = absorbed;
      with_add.push_back(*add);
      candidates.push_back({fused(bias, *graph.node(*add).outputs[0]), std::move(with_add)});
    }
  }
  candidates.push_back({fused(std::nullopt, *graph.node(*mul).outputs[0]), std::move(absorbed)});
  return candidates;
}

}  // namespace

std::vector<std::string> FuseIntegerMatMulChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition) {
  return FuseChains(
      graph, views, providers, capture_plan, partition, "MatMulInteger",
      [&](NodeId head, const ChainRules& rules) { return Candidates(graph, head, rules); });
}

}  // namespace nxrt::partitioner
