#include "nxrt/graph/attention_geometry.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "nxrt/graph/attention_kv_slots.hpp"

namespace nxrt::graph {
namespace {

constexpr size_t kGqaSeqlensK = 5;
constexpr size_t kAttentionMask = 3;
constexpr size_t kIndexShareBias = 5;

bool IsGqa(const Node& node) {
  return node.domain == "com.microsoft" && node.op_type == "GroupQueryAttention";
}
bool IsDefaultAttention(const Node& node) {
  return node.is_default_domain() && node.op_type == "Attention";
}
bool IsIndexShare(const Node& node) {
  return node.domain == "pkg.nxrt" && node.op_type == "IndexShare";
}

bool HasInput(const Node& node, size_t slot) {
  return slot < node.inputs.size() && node.inputs[slot].has_value();
}

bool IsPastSlot(const KvCacheSlots& slots, size_t input_slot) {
  return std::find(slots.past_inputs.begin(), slots.past_inputs.end(), input_slot) !=
         slots.past_inputs.end();
}

// Past input k shares its buffer with present output k - 2 when both
// sequence axes are the same extent.
bool SharesBufferWithPresent(const Graph& graph, const Node& node, size_t input_slot) {
  const Shape* past = InputShape(graph, node, input_slot);
  const Shape* present = OutputShape(graph, node, input_slot - 2);
  if (past == nullptr || present == nullptr || past->size() < 2 || present->size() < 2) {
    return false;
  }
  return (*past)[past->size() - 2] == (*present)[present->size() - 2];
}

bool SequenceAxisMatchesMaskLength(const Graph& graph, const Node& node, size_t input_slot) {
  const Shape* past = InputShape(graph, node, input_slot);
  const Shape* mask = InputShape(graph, node, kAttentionMask);
  if (past == nullptr || mask == nullptr || past->size() < 2 || mask->empty()) return false;
  return (*past)[past->size() - 2] == mask->back();
}

std::string Lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

bool ReadsInputAtCapacity(const Graph& graph, const Node& node, size_t input_slot) {
  const auto slots = FindKvCacheSlots(node);
  if (!slots || !IsPastSlot(*slots, input_slot) || !HasInput(node, input_slot)) return false;
  if (IsGqa(node)) {
    return HasInput(node, kGqaSeqlensK) && SharesBufferWithPresent(graph, node, input_slot);
  }
  if (IsDefaultAttention(node)) {
    return HasInput(node, kAttentionMask) && SequenceAxisMatchesMaskLength(graph, node, input_slot);
  }
  if (IsIndexShare(node)) {
    return HasInput(node, kIndexShareBias) && SharesBufferWithPresent(graph, node, input_slot);
  }
  return false;
}

bool IsCapacityFormAttention(const Graph& graph, const Node& node) {
  const auto slots = FindKvCacheSlots(node);
  if (!slots || slots->past_inputs.empty()) return false;
  return std::all_of(slots->past_inputs.begin(), slots->past_inputs.end(),
                     [&](size_t slot) { return ReadsInputAtCapacity(graph, node, slot); });
}

bool IsCapacityFormMaskInput(const Graph& graph, const Node& node, size_t input_slot) {
  const bool is_mask_slot = (IsDefaultAttention(node) && input_slot == kAttentionMask) ||
                            (IsIndexShare(node) && input_slot == kIndexShareBias);
  return is_mask_slot && IsCapacityFormAttention(graph, node);
}

bool IsAdditiveMaskBuilderOp(const Node& node) {
  static constexpr std::array<std::string_view, 21> kBuilders = {
      "Cast",  "CumSum", "Slice", "Where", "Add",         "Sub",     "Mul",
      "Neg",   "Min",    "Max",   "Less",  "LessOrEqual", "Greater", "GreaterOrEqual",
      "Equal", "Not",    "And",   "Or",    "Unsqueeze",   "Expand",  "Reshape"};
  return node.is_default_domain() &&
         std::find(kBuilders.begin(), kBuilders.end(), node.op_type) != kBuilders.end();
}

bool IsAttentionMaskName(std::string_view value_name) {
  const std::string lower = Lowercase(value_name);
  return lower.find("attention_mask") != std::string::npos ||
         lower.find("attn_mask") != std::string::npos;
}

bool IsAttentionMaskInput(const Graph& graph, ValueId input,
                          std::span<const std::string> bound_mask_names) {
  const Value* value = graph.try_value(input);
  if (value == nullptr) return false;
  return IsAttentionMaskName(value->name) ||
         std::find(bound_mask_names.begin(), bound_mask_names.end(), value->name) !=
             bound_mask_names.end();
}

AdditiveMaskCone WalkAdditiveMaskCone(const Graph& graph, const ValueConsumers& consumers,
                                      ValueId mask) {
  AdditiveMaskCone cone;
  std::vector<uint8_t> visited(graph.values.size(), 0);
  if (mask.index >= graph.values.size()) return cone;
  std::vector<ValueId> frontier = {mask};
  visited[mask.index] = 1;
  while (!frontier.empty()) {
    const ValueId value = frontier.back();
    frontier.pop_back();
    cone.values.push_back(value);
    for (const ValueConsumer& consumer : consumers.Of(value)) {
      const Node& node = graph.node(consumer.node);
      if (IsCapacityFormMaskInput(graph, node, consumer.input_slot)) {
        if (value != mask) cone.reaches_capacity_mask_input = true;
        continue;
      }
      if (!IsAdditiveMaskBuilderOp(node)) continue;
      for (const auto& output : node.outputs) {
        if (!output || output->index >= graph.values.size() || visited[output->index]) continue;
        visited[output->index] = 1;
        frontier.push_back(*output);
      }
    }
  }
  return cone;
}

bool FeedsAdditiveCausalBuilder(const Graph& graph, const ValueConsumers& consumers, ValueId input,
                                std::span<const std::string> bound_mask_names) {
  return IsAttentionMaskInput(graph, input, bound_mask_names) &&
         WalkAdditiveMaskCone(graph, consumers, input).reaches_capacity_mask_input;
}

}  // namespace nxrt::graph
