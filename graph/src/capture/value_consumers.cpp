#include "nxrt/graph/value_consumers.hpp"

namespace nxrt::graph {
namespace {

void CollectOuterReads(const Graph& body, std::unordered_set<std::string>& names) {
  for (const Value& value : body.values) {
    if (value.is_outer_scope) names.insert(value.name);
  }
  for (const Node& node : body.nodes) {
    for (const Attribute& attribute : node.attributes) {
      if (attribute.graph) CollectOuterReads(*attribute.graph, names);
      for (const auto& nested : attribute.graphs) CollectOuterReads(*nested, names);
    }
  }
}

}  // namespace

std::unordered_set<std::string> OuterScopeReads(const Graph& graph) {
  std::unordered_set<std::string> names;
  for (const Node& node : graph.nodes) {
    for (const Attribute& attribute : node.attributes) {
      if (attribute.graph) CollectOuterReads(*attribute.graph, names);
      for (const auto& body : attribute.graphs) CollectOuterReads(*body, names);
    }
  }
  return names;
}

ValueConsumers::ValueConsumers(const Graph& graph) : offsets_(graph.values.size() + 1, 0) {
  auto readable = [&graph](const std::optional<ValueId>& input) {
    return input && input->index < graph.values.size();
  };
  for (const Node& node : graph.nodes) {
    for (const auto& input : node.inputs) {
      if (readable(input)) ++offsets_[input->index + 1];
    }
  }
  for (size_t i = 1; i < offsets_.size(); ++i) offsets_[i] += offsets_[i - 1];
  consumers_.resize(offsets_.back());
  std::vector<size_t> cursor(offsets_.begin(), offsets_.end() - 1);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
      if (!readable(node.inputs[slot])) continue;
      consumers_[cursor[node.inputs[slot]->index]++] =
          ValueConsumer{NodeId{static_cast<uint32_t>(n)}, slot};
    }
  }
}

std::span<const ValueConsumer> ValueConsumers::Of(ValueId value) const {
  if (value.index + size_t{1} >= offsets_.size()) return {};
  return std::span<const ValueConsumer>(consumers_)
      .subspan(offsets_[value.index], offsets_[value.index + 1] - offsets_[value.index]);
}

}  // namespace nxrt::graph
