#include "partitioner/activation_fusion.hpp"

#include <unordered_set>

#include "nxrt/graph/value_consumers.hpp"
#include "nxrt/support/log.hpp"

namespace nxrt::partitioner {
namespace {

constexpr char kFusedDomain[] = "com.microsoft";
constexpr char kFusedOp[] = "FusedConv";
constexpr int64_t kFusedOpset = 1;

std::shared_ptr<const graph::Node> FusedNode(const graph::Node& conv, const graph::Node& relu) {
  auto fused = std::make_shared<graph::Node>(conv);
  fused->op_type = kFusedOp;
  fused->domain = kFusedDomain;
  fused->outputs = relu.outputs;
  graph::Attribute activation;
  activation.name = "activation";
  activation.type = graph::AttributeType::kString;
  activation.s = "Relu";
  fused->attributes.push_back(std::move(activation));
  return fused;
}

}  // namespace

std::vector<std::string> FuseConvActivations(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition) {
  const graph::ValueConsumers consumers(graph);
  const std::unordered_set<std::string> outer_reads = graph::OuterScopeReads(graph);
  std::unordered_set<uint32_t> outputs;
  for (graph::ValueId id : graph.outputs) outputs.insert(id.index);

  std::vector<std::string> fusions;
  for (uint32_t index = 0; index < graph.nodes.size(); ++index) {
    const graph::NodeId conv_id{index};
    const graph::Node& conv = graph.node(conv_id);
    if (conv.op_type != "Conv" || !conv.is_default_domain() || conv.outputs.size() != 1 ||
        !conv.outputs[0]) {
      continue;
    }
    const graph::ValueId between = *conv.outputs[0];
    const auto readers = consumers.Of(between);
    if (readers.size() != 1 || outputs.contains(between.index) ||
        outer_reads.contains(graph.value(between).name)) {
      continue;
    }
    const graph::NodeId relu_id = readers[0].node;
    const graph::Node& relu = graph.node(relu_id);
    if (relu.op_type != "Relu" || !relu.is_default_domain() || relu.outputs.size() != 1 ||
        !relu.outputs[0]) {
      continue;
    }
    const size_t provider = partition.provider_of_node[index];
    if (partition.provider_of_node[relu_id.index] != provider ||
        capture_plan.IsEligible(conv_id) != capture_plan.IsEligible(relu_id)) {
      continue;
    }
    auto view =
        std::make_shared<const plugin_host::NodeView>(graph, conv_id, FusedNode(conv, relu));
    Result<plugin_host::ClaimDecision> claim =
        providers[provider].provider->Claim(*view, kFusedOpset);
    if (!claim.ok()) {
      GetLogger()->warn("{}; it and Relu '{}' stay apart", claim.status().message(), relu.name);
      continue;
    }
    if (!claim->claimed) continue;
    views[index] = std::move(view);
    partition.opset_of_node[index] = kFusedOpset;
    partition.absorbed[relu_id.index] = true;
    partition.placements[relu_id.index].fused_into = conv.name;
    fusions.push_back("Conv '" + conv.name + "' and Relu '" + relu.name + "' fused as " +
                      kFusedDomain + "::" + kFusedOp + " on " + providers[provider].label);
  }
  return fusions;
}

}  // namespace nxrt::partitioner
