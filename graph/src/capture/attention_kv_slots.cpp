#include "nxrt/graph/attention_kv_slots.hpp"

#include <array>
#include <optional>

namespace nxrt::graph {
namespace {

constexpr std::array<size_t, 2> kGqaPast = {3, 4};
constexpr std::array<size_t, 2> kAttentionPast = {4, 5};
constexpr std::array<size_t, 2> kIndexSharePast = {3, 4};
constexpr std::array<size_t, 2> kPresentKeyValue = {1, 2};
constexpr std::array<size_t, 2> kSparseRecords = {1, 3};
constexpr std::array<size_t, 1> kSparseSelections = {5};

const Shape* SlotShape(const Graph& graph, const std::vector<std::optional<ValueId>>& slots,
                       size_t slot) {
  if (slot >= slots.size() || !slots[slot]) return nullptr;
  const Value* value = graph.try_value(*slots[slot]);
  if (value == nullptr || !value->shape) return nullptr;
  return &*value->shape;
}

}  // namespace

std::optional<KvCacheSlots> FindKvCacheSlots(const Node& node) {
  if (node.domain == "com.microsoft" && node.op_type == "GroupQueryAttention") {
    return KvCacheSlots{kGqaPast, kPresentKeyValue, {}};
  }
  if (node.is_default_domain() && node.op_type == "Attention") {
    return KvCacheSlots{kAttentionPast, kPresentKeyValue, {}};
  }
  if (node.domain == "pkg.nxrt" && node.op_type == "IndexShare") {
    return KvCacheSlots{kIndexSharePast, kPresentKeyValue, {}};
  }
  if ((node.domain == "pkg.nxrt" || node.domain == "com.microsoft") &&
      node.op_type == "CompressedSparseAttention") {
    return KvCacheSlots{{}, kSparseRecords, kSparseSelections};
  }
  return std::nullopt;
}

std::optional<SymbolId> SequenceAxisSymbol(const Shape& shape) {
  if (shape.size() < 2) return std::nullopt;
  const Dim& axis = shape[shape.size() - 2];
  if (!axis.is_symbolic()) return std::nullopt;
  return axis.symbol();
}

std::optional<SymbolId> LastAxisSymbol(const Shape& shape) {
  if (shape.empty() || !shape.back().is_symbolic()) return std::nullopt;
  return shape.back().symbol();
}

const Shape* InputShape(const Graph& graph, const Node& node, size_t slot) {
  return SlotShape(graph, node.inputs, slot);
}

const Shape* OutputShape(const Graph& graph, const Node& node, size_t slot) {
  return SlotShape(graph, node.outputs, slot);
}

}  // namespace nxrt::graph
