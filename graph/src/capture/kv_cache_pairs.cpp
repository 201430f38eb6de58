#include "nxrt/graph/kv_cache_pairs.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_set>

#include "nxrt/graph/attention_kv_slots.hpp"
#include "nxrt/graph/value_consumers.hpp"

namespace nxrt::graph {
namespace {

constexpr int kNotFromPast = -1;

// A tensor met on the way from a past: for each of its axes, the past's axis
// it carries (kNotFromPast for an inserted one), and once appended to, the
// axis that grew, in the tensor's own coordinates.
struct TraceState {
  ValueId value;
  std::vector<int> origin;
  std::optional<size_t> grown;
  size_t ops = 0;
};

bool IsFloat(DataType dtype) {
  return dtype == DataType::kFloat32 || dtype == DataType::kFloat16 ||
         dtype == DataType::kBfloat16 || dtype == DataType::kFloat64;
}

std::optional<size_t> NormalizeAxis(int64_t axis, size_t rank) {
  const int64_t signed_rank = static_cast<int64_t>(rank);
  if (axis < -signed_rank || axis >= signed_rank) return std::nullopt;
  return static_cast<size_t>(axis < 0 ? axis + signed_rank : axis);
}

// The int64 elements of a constant input (an initializer or a Constant node).
std::optional<std::vector<int64_t>> ConstantInts(const Graph& graph, const Node& node,
                                                 size_t slot) {
  if (slot >= node.inputs.size() || !node.inputs[slot]) return std::nullopt;
  const Value& value = graph.value(*node.inputs[slot]);
  std::optional<WeightRef> ref;
  if (value.is_constant()) {
    ref = value.initializer;
  } else if (value.producer.valid()) {
    const Node& producer = graph.node(value.producer);
    const Attribute* attribute = producer.FindAttribute("value");
    if (producer.is_default_domain() && producer.op_type == "Constant" && attribute != nullptr) {
      ref = attribute->tensor;
    }
  }
  if (!ref) return std::nullopt;
  const TensorData& data = graph.weights->Get(*ref);
  if (data.dtype != DataType::kInt64) return std::nullopt;
  std::vector<int64_t> ints(data.bytes.size() / sizeof(int64_t));
  std::memcpy(ints.data(), data.bytes.data(), ints.size() * sizeof(int64_t));
  return ints;
}

// Squeeze and Unsqueeze name their axes by attribute up to opset 12 and by
// a second input after.
std::optional<std::vector<int64_t>> AxesOf(const Graph& graph, const Node& node) {
  if (const Attribute* axes = node.FindAttribute("axes")) return axes->ints;
  return ConstantInts(graph, node, 1);
}

int64_t IntAttribute(const Node& node, const char* name, int64_t fallback) {
  const Attribute* attribute = node.FindAttribute(name);
  return attribute != nullptr ? attribute->i : fallback;
}

// The states of `node`'s outputs when `in` enters it at `slot`; none when the
// op does more to the tensor than the trace follows.
class StepRules {
 public:
  explicit StepRules(const Graph& graph) : graph_(graph) {}

  std::vector<TraceState> Next(const TraceState& in, const Node& node, size_t slot) const {
    const std::string& op = node.op_type;
    if (const auto kv = FindKvCacheSlots(node)) return ThroughAttention(in, node, slot, *kv);
    if (!node.is_default_domain()) return None();
    if (op == "Concat") return ThroughConcat(in, node);
    if (slot != 0) return None();
    if (op == "Identity" || op == "Cast") return Keep(in, node, 0, in.origin, in.grown);
    if (op == "Split") return ThroughSplit(in, node);
    if (op == "Transpose") return ThroughTranspose(in, node);
    if (op == "Squeeze") return ThroughSqueeze(in, node);
    if (op == "Unsqueeze") return ThroughUnsqueeze(in, node);
    if (op == "Gather") return ThroughGather(in, node);
    return None();
  }

 private:
  static std::vector<TraceState> None() { return {}; }

  static std::vector<TraceState> Keep(const TraceState& in, const Node& node, size_t output,
                                      std::vector<int> origin, std::optional<size_t> grown) {
    if (output >= node.outputs.size() || !node.outputs[output]) return {};
    return {TraceState{*node.outputs[output], std::move(origin), grown, in.ops + 1}};
  }

  std::vector<TraceState> ThroughAttention(const TraceState& in, const Node& node, size_t slot,
                                           const KvCacheSlots& kv) const {
    const auto past = std::ranges::find(kv.past_inputs, slot);
    if (in.grown || past == kv.past_inputs.end() || in.origin.size() < 2) return None();
    const size_t index = static_cast<size_t>(past - kv.past_inputs.begin());
    if (index >= kv.present_outputs.size()) return None();
    return Keep(in, node, kv.present_outputs[index], in.origin, in.origin.size() - 2);
  }

  std::vector<TraceState> ThroughConcat(const TraceState& in, const Node& node) const {
    const auto axis = NormalizeAxis(IntAttribute(node, "axis", 0), in.origin.size());
    if (!axis) return None();
    if (node.inputs.size() == 1) return Keep(in, node, 0, in.origin, in.grown);
    if (!in.grown) {
      if (in.origin[*axis] == kNotFromPast) return None();
      return Keep(in, node, 0, in.origin, *axis);
    }
    // Stacking grown tensors along another axis, as a legacy single past does.
    if (*axis == *in.grown) return None();
    return Keep(in, node, 0, in.origin, in.grown);
  }

  std::vector<TraceState> ThroughSplit(const TraceState& in, const Node& node) const {
    const auto axis = NormalizeAxis(IntAttribute(node, "axis", 0), in.origin.size());
    if (!axis || axis == in.grown) return None();
    std::vector<TraceState> states;
    for (size_t output = 0; output < node.outputs.size(); ++output) {
      for (TraceState& state : Keep(in, node, output, in.origin, in.grown)) {
        states.push_back(std::move(state));
      }
    }
    return states;
  }

  std::vector<TraceState> ThroughTranspose(const TraceState& in, const Node& node) const {
    const size_t rank = in.origin.size();
    std::vector<int64_t> perm(rank);
    if (const Attribute* attribute = node.FindAttribute("perm")) {
      perm = attribute->ints;
    } else {
      for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
    }
    if (perm.size() != rank) return None();
    std::vector<int> origin(rank);
    std::optional<size_t> grown;
    for (size_t i = 0; i < rank; ++i) {
      const auto from = NormalizeAxis(perm[i], rank);
      if (!from) return None();
      origin[i] = in.origin[*from];
      if (in.grown == *from) grown = i;
    }
    return Keep(in, node, 0, std::move(origin), grown);
  }

  std::vector<TraceState> ThroughSqueeze(const TraceState& in, const Node& node) const {
    const auto axes = AxesOf(graph_, node);
    if (!axes || axes->empty()) return None();
    std::vector<bool> dropped(in.origin.size(), false);
    for (int64_t axis : *axes) {
      const auto at = NormalizeAxis(axis, in.origin.size());
      if (!at || at == in.grown) return None();
      dropped[*at] = true;
    }
    return Remap(in, node, dropped);
  }

  std::vector<TraceState> ThroughUnsqueeze(const TraceState& in, const Node& node) const {
    const auto axes = AxesOf(graph_, node);
    if (!axes) return None();
    const size_t rank = in.origin.size() + axes->size();
    std::vector<bool> inserted(rank, false);
    for (int64_t axis : *axes) {
      const auto at = NormalizeAxis(axis, rank);
      if (!at) return None();
      inserted[*at] = true;
    }
    std::vector<int> origin;
    std::optional<size_t> grown;
    size_t from = 0;
    for (size_t i = 0; i < rank; ++i) {
      if (inserted[i]) {
        origin.push_back(kNotFromPast);
        continue;
      }
      if (from >= in.origin.size()) return None();
      if (in.grown == from) grown = i;
      origin.push_back(in.origin[from++]);
    }
    return Keep(in, node, 0, std::move(origin), grown);
  }

  // A Gather of one index drops its axis, as picking key or value out of a
  // stacked past does.
  std::vector<TraceState> ThroughGather(const TraceState& in, const Node& node) const {
    if (node.inputs.size() < 2 || !node.inputs[1]) return None();
    const Value& indices = graph_.value(*node.inputs[1]);
    if (!indices.shape || !indices.shape->empty()) return None();
    const auto axis = NormalizeAxis(IntAttribute(node, "axis", 0), in.origin.size());
    if (!axis || axis == in.grown) return None();
    std::vector<bool> dropped(in.origin.size(), false);
    dropped[*axis] = true;
    return Remap(in, node, dropped);
  }

  static std::vector<TraceState> Remap(const TraceState& in, const Node& node,
                                       const std::vector<bool>& dropped) {
    std::vector<int> origin;
    std::optional<size_t> grown;
    for (size_t i = 0; i < in.origin.size(); ++i) {
      if (dropped[i]) continue;
      if (in.grown == i) grown = origin.size();
      origin.push_back(in.origin[i]);
    }
    return Keep(in, node, 0, std::move(origin), grown);
  }

  const Graph& graph_;
};

// The outputs a past reaches once grown, with the axes in both coordinates.
std::vector<KvCachePair> TracePast(const Graph& graph, const ValueConsumers& consumers,
                                   const StepRules& rules,
                                   const std::unordered_set<ValueId>& outputs, ValueId past) {
  const Value& value = graph.value(past);
  std::vector<int> identity(value.shape->size());
  for (size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<int>(i);
  std::vector<TraceState> pending = {TraceState{past, identity, std::nullopt, 0}};
  std::vector<KvCachePair> found;
  while (!pending.empty()) {
    const TraceState state = std::move(pending.back());
    pending.pop_back();
    if (state.grown && outputs.contains(state.value)) {
      const int past_axis = state.origin[*state.grown];
      const bool known = std::ranges::any_of(
          found, [&](const KvCachePair& pair) { return pair.present == state.value; });
      if (!known) {
        found.push_back({past, state.value, static_cast<size_t>(past_axis), *state.grown});
      }
    }
    if (state.ops >= kMaxTraceOps) continue;
    for (const ValueConsumer& consumer : consumers.Of(state.value)) {
      const Node& node = graph.node(consumer.node);
      for (TraceState& next : rules.Next(state, node, consumer.input_slot)) {
        pending.push_back(std::move(next));
      }
    }
  }
  return found;
}

}  // namespace

std::vector<KvCachePair> TraceKvCachePairs(const Graph& graph) {
  const ValueConsumers consumers(graph);
  const StepRules rules(graph);
  const std::unordered_set<ValueId> outputs(graph.outputs.begin(), graph.outputs.end());
  std::vector<KvCachePair> pairs;
  for (ValueId input : graph.inputs) {
    const Value& value = graph.value(input);
    if (!IsFloat(value.dtype) || !value.shape || value.shape->size() < 3) continue;
    std::vector<KvCachePair> found = TracePast(graph, consumers, rules, outputs, input);
    if (found.size() == 1) pairs.push_back(found.front());
  }
  return pairs;
}

}  // namespace nxrt::graph
