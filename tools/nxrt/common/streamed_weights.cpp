#include "common/streamed_weights.hpp"

#include <string_view>
#include <unordered_set>

#include "nxrt/graph/weight_store.hpp"

namespace nxrt::cli {
namespace {

// Whether input `index` of `node` is a table the op reads a few rows of.
bool IsIndexedTable(const graph::Node& node, size_t index) {
  const std::string_view op = node.op_type;
  return index == 0 && node.is_default_domain() &&
         (op == "Gather" || op == "GatherElements" || op == "GatherND");
}

}  // namespace

uint64_t StreamedWeightBytes(const graph::Graph& graph) {
  std::unordered_set<uint32_t> counted;
  uint64_t bytes = 0;
  for (const graph::Node& node : graph.nodes) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (!node.inputs[i] || IsIndexedTable(node, i)) continue;
      const graph::Value& value = graph.value(*node.inputs[i]);
      if (!value.is_constant() || !counted.insert(node.inputs[i]->index).second) continue;
      bytes += graph.weights->Get(*value.initializer).bytes.size();
    }
  }
  return bytes;
}

}  // namespace nxrt::cli
