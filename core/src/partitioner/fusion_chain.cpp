#include "partitioner/fusion_chain.hpp"

#include <algorithm>
#include <cstring>

#include "nxrt/support/log.hpp"

namespace nxrt::partitioner {
namespace {

constexpr int64_t kFusedOpset = 1;

std::string Label(const graph::Node& node) {
  return node.domain.empty() ? node.op_type : node.domain + "::" + node.op_type;
}

// Offers `candidate` in place of `head`; on a claim applies it and returns
// the line that reports it.
std::optional<std::string> Offer(const graph::Graph& graph, graph::NodeId head,
                                 const FusionCandidate& candidate,
                                 std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
                                 std::span<const RankedProvider> providers, Partition& partition) {
  const size_t provider = partition.provider_of_node[head.index];
  auto view = std::make_shared<const plugin_host::NodeView>(graph, head, candidate.node);
  // A fused node of the default domain is an ONNX op, claimed at the
  // model's opset; the others are at their domain's opset 1.
  const int64_t opset =
      candidate.node->is_default_domain() ? partition.opset_of_node[head.index] : kFusedOpset;
  Result<plugin_host::ClaimDecision> claim = providers[provider].provider->Claim(*view, opset);
  if (!claim.ok()) {
    GetLogger()->warn("{}; the nodes stay apart", claim.status().message());
    return std::nullopt;
  }
  if (!claim->claimed) return std::nullopt;
  const graph::Node& head_node = graph.node(head);
  std::string line = head_node.op_type + " '" + head_node.name + "'";
  const std::vector<graph::NodeId>& absorbed = candidate.absorbed;
  for (size_t i = 0; i < absorbed.size(); ++i) {
    const graph::Node& taken = graph.node(absorbed[i]);
    partition.absorbed[absorbed[i].index] = true;
    partition.placements[absorbed[i].index].fused_into = head_node.name;
    line += (i + 1 == absorbed.size() ? " and " : ", ") + taken.op_type + " '" + taken.name + "'";
  }
  views[head.index] = std::move(view);
  partition.opset_of_node[head.index] = opset;
  return line + " fused as " + Label(*candidate.node) + " on " + providers[provider].label;
}

}  // namespace

ChainRules::ChainRules(const graph::Graph& graph, const graph::CapturePlan& capture_plan,
                       const Partition& partition)
    : graph_(graph),
      capture_plan_(capture_plan),
      partition_(partition),
      consumers_(graph),
      outer_reads_(graph::OuterScopeReads(graph)) {
  for (graph::ValueId id : graph.outputs) outputs_.insert(id.index);
}

std::optional<graph::NodeId> ChainRules::Next(graph::NodeId last, std::string_view op) const {
  const graph::Node& node = graph_.node(last);
  if (!HasOneOutput(node)) return std::nullopt;
  const auto readers = consumers_.Of(*node.outputs[0]);
  if (readers.size() != 1) return std::nullopt;
  const graph::NodeId next = readers[0].node;
  const graph::Node& candidate = graph_.node(next);
  if (candidate.op_type != op || !candidate.is_default_domain() || !HasOneOutput(candidate) ||
      !MayAbsorb(last, next) || partition_.absorbed[next.index]) {
    return std::nullopt;
  }
  return next;
}

std::optional<graph::NodeId> ChainRules::Producer(graph::NodeId node, size_t input,
                                                  std::string_view op) const {
  const graph::Node& reader = graph_.node(node);
  if (input >= reader.inputs.size() || !reader.inputs[input]) return std::nullopt;
  const graph::NodeId producer = graph_.value(*reader.inputs[input]).producer;
  if (!producer.valid()) return std::nullopt;
  const graph::Node& made_by = graph_.node(producer);
  if (made_by.op_type != op || !made_by.is_default_domain() || !HasOneOutput(made_by)) {
    return std::nullopt;
  }
  return producer;
}

std::optional<std::pair<graph::NodeId, graph::NodeId>> ChainRules::GatedBy(
    graph::NodeId last, std::string_view gate_op, std::string_view combine_op) const {
  const graph::Node& node = graph_.node(last);
  if (!HasOneOutput(node)) return std::nullopt;
  const graph::ValueId x = *node.outputs[0];
  const auto readers = consumers_.Of(x);
  if (readers.size() != 2 || outputs_.contains(x.index) ||
      outer_reads_.contains(graph_.value(x).name)) {
    return std::nullopt;
  }
  for (const size_t first : {0, 1}) {
    const graph::NodeId gate = readers[first].node;
    const graph::NodeId combine = readers[1 - first].node;
    const graph::Node& gate_node = graph_.node(gate);
    const graph::Node& combine_node = graph_.node(combine);
    if (gate_node.op_type != gate_op || !gate_node.is_default_domain() ||
        combine_node.op_type != combine_op || !combine_node.is_default_domain() ||
        gate_node.inputs.size() != 1 || !HasOneOutput(combine_node) ||
        combine_node.inputs.size() != 2 || !MayAbsorb(gate, combine) ||
        partition_.absorbed[combine.index]) {
      continue;
    }
    const graph::ValueId gated = *gate_node.outputs[0];
    const auto& operands = combine_node.inputs;
    const bool reads_both = operands[0] && operands[1] &&
                            ((*operands[0] == x && *operands[1] == gated) ||
                             (*operands[0] == gated && *operands[1] == x));
    const auto placed_alike = [&](graph::NodeId other) {
      return partition_.provider_of_node[other.index] == partition_.provider_of_node[last.index] &&
             capture_plan_.IsEligible(other) == capture_plan_.IsEligible(last);
    };
    if (reads_both && placed_alike(gate) && placed_alike(combine)) {
      return std::make_pair(gate, combine);
    }
  }
  return std::nullopt;
}

bool ChainRules::MayAbsorb(graph::NodeId producer, graph::NodeId reader) const {
  // A node of constants computes the same in every run, captured or not.
  const graph::Node& made_by = graph_.node(producer);
  const bool of_constants =
      std::all_of(made_by.inputs.begin(), made_by.inputs.end(),
                  [&](const auto& input) { return !input || graph_.value(*input).is_constant(); });
  return ReadOnlyBy(producer, reader) && !partition_.absorbed[producer.index] &&
         partition_.provider_of_node[producer.index] == partition_.provider_of_node[reader.index] &&
         (of_constants || capture_plan_.IsEligible(producer) == capture_plan_.IsEligible(reader));
}

bool ChainRules::ReadOnlyBy(graph::NodeId node, graph::NodeId reader) const {
  const graph::Node& n = graph_.node(node);
  if (!HasOneOutput(n)) return false;
  const graph::ValueId between = *n.outputs[0];
  const auto readers = consumers_.Of(between);
  if (outputs_.contains(between.index) || outer_reads_.contains(graph_.value(between).name)) {
    return false;
  }
  return std::all_of(readers.begin(), readers.end(),
                     [&](const auto& r) { return r.node == reader; }) &&
         !readers.empty();
}

bool ChainRules::HasOneOutput(const graph::Node& node) {
  if (node.outputs.empty() || !node.outputs[0]) return false;
  for (size_t i = 1; i < node.outputs.size(); ++i) {
    if (node.outputs[i]) return false;
  }
  return true;
}

graph::Attribute StringAttribute(const std::string& name, const std::string& value) {
  graph::Attribute a;
  a.name = name;
  a.type = graph::AttributeType::kString;
  a.s = value;
  return a;
}

graph::Attribute IntAttribute(const std::string& name, int64_t value) {
  graph::Attribute a;
  a.name = name;
  a.type = graph::AttributeType::kInt;
  a.i = value;
  return a;
}

graph::Attribute FloatsAttribute(const std::string& name, std::vector<float> values) {
  graph::Attribute a;
  a.name = name;
  a.type = graph::AttributeType::kFloats;
  a.floats = std::move(values);
  return a;
}

std::optional<int64_t> StaticCount(const graph::Graph& graph, graph::ValueId id) {
  const std::optional<graph::Shape>& shape = graph.value(id).shape;
  if (!shape) return std::nullopt;
  int64_t count = 1;
  for (const graph::Dim& d : *shape) {
    if (!d.is_static()) return std::nullopt;
    count *= d.extent();
  }
  return count;
}

std::optional<float> FloatScalar(const graph::Graph& graph, std::optional<graph::ValueId> id) {
  if (!id || !graph.value(*id).is_constant()) return std::nullopt;
  const graph::TensorData& data = graph.weights->Get(*graph.value(*id).initializer);
  if (data.dtype != graph::DataType::kFloat32 || data.bytes.size() != sizeof(float)) {
    return std::nullopt;
  }
  float value = 0;
  std::memcpy(&value, data.bytes.data(), sizeof(float));
  return value;
}

std::optional<graph::ValueId> Other(const graph::Node& node, graph::ValueId known) {
  if (node.inputs.size() != 2 || !node.inputs[0] || !node.inputs[1]) return std::nullopt;
  if (*node.inputs[0] == known) return node.inputs[1];
  if (*node.inputs[1] == known) return node.inputs[0];
  return std::nullopt;
}

std::vector<std::string> FuseChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition, std::string_view head_op, const ChainProposer& propose) {
  const ChainRules rules(graph, capture_plan, partition);
  std::vector<std::string> fusions;
  for (uint32_t index = 0; index < graph.nodes.size(); ++index) {
    const graph::NodeId head{index};
    const graph::Node& head_node = graph.node(head);
    if (head_node.op_type != head_op || !head_node.is_default_domain() ||
        partition.absorbed[index]) {
      continue;
    }
    for (const FusionCandidate& candidate : propose(head, rules)) {
      if (std::optional<std::string> line =
              Offer(graph, head, candidate, views, providers, partition)) {
        fusions.push_back(std::move(*line));
        break;
      }
    }
  }
  return fusions;
}

}  // namespace nxrt::partitioner
