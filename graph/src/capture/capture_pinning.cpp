#include "nxrt/graph/capture_pinning.hpp"

#include <algorithm>

#include "nxrt/graph/attention_geometry.hpp"
#include "nxrt/graph/attention_kv_slots.hpp"
#include "nxrt/graph/value_consumers.hpp"

namespace nxrt::graph {
namespace {

std::vector<SymbolId> SortedUnique(std::vector<SymbolId> symbols) {
  std::sort(symbols.begin(), symbols.end());
  symbols.erase(std::unique(symbols.begin(), symbols.end()), symbols.end());
  return symbols;
}

}  // namespace

std::vector<SymbolId> CollectCapacityPinnedKvSymbols(const Graph& graph) {
  std::vector<SymbolId> pinned;
  for (const Node& node : graph.nodes) {
    if (!IsCapacityFormAttention(graph, node)) continue;
    const KvCacheSlots slots = *FindKvCacheSlots(node);
    for (size_t slot : slots.past_inputs) {
      const Shape* shape = InputShape(graph, node, slot);
      if (shape == nullptr) continue;
      if (auto symbol = SequenceAxisSymbol(*shape)) pinned.push_back(*symbol);
    }
    for (size_t slot : slots.present_outputs) {
      const Shape* shape = OutputShape(graph, node, slot);
      if (shape == nullptr) continue;
      if (auto symbol = SequenceAxisSymbol(*shape)) pinned.push_back(*symbol);
    }
  }
  return SortedUnique(std::move(pinned));
}

std::vector<SymbolId> CollectFreezeSafeMaskSymbols(const Graph& graph,
                                                   std::span<const std::string> bound_mask_names) {
  const ValueConsumers consumers(graph);
  std::vector<SymbolId> pinned;
  for (ValueId input : graph.inputs) {
    if (!IsAttentionMaskInput(graph, input, bound_mask_names)) continue;
    const AdditiveMaskCone cone = WalkAdditiveMaskCone(graph, consumers, input);
    if (!cone.reaches_capacity_mask_input) continue;
    for (ValueId id : cone.values) {
      const Value& value = graph.value(id);
      if (!value.shape) continue;
      for (const Dim& dim : *value.shape) {
        if (dim.is_symbolic()) pinned.push_back(dim.symbol());
      }
    }
  }
  return SortedUnique(std::move(pinned));
}

}  // namespace nxrt::graph
