#include "nxrt/graph/decoder_signature.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string_view>
#include <unordered_set>

#include "nxrt/graph/kv_cache_pairs.hpp"
#include "nxrt/graph/value_consumers.hpp"

namespace nxrt::graph {
namespace {

bool IsInteger(DataType dtype) {
  return dtype == DataType::kInt64 || dtype == DataType::kInt32;
}

bool IsFloat(DataType dtype) {
  return dtype == DataType::kFloat32 || dtype == DataType::kFloat16 || dtype == DataType::kBfloat16;
}

size_t Rank(const Value& value) {
  return value.shape ? value.shape->size() : SIZE_MAX;
}

bool NameHas(const std::string& name, std::string_view part) {
  std::string lower = name;
  std::ranges::transform(lower, lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower.find(part) != std::string::npos;
}

// Whether `input` indexes an embedding table, directly or through a Cast.
bool IndexesEmbedding(const Graph& graph, const ValueConsumers& consumers, ValueId input) {
  std::vector<ValueId> reached = {input};
  for (const ValueConsumer& consumer : consumers.Of(input)) {
    const Node& node = graph.node(consumer.node);
    if (node.is_default_domain() && node.op_type == "Cast" && node.outputs[0]) {
      reached.push_back(*node.outputs[0]);
    }
  }
  for (ValueId value : reached) {
    for (const ValueConsumer& consumer : consumers.Of(value)) {
      const Node& node = graph.node(consumer.node);
      if (!node.is_default_domain() || node.op_type != "Gather" || consumer.input_slot != 1) {
        continue;
      }
      const Value& table = graph.value(*node.inputs[0]);
      if (table.is_constant() && IsFloat(table.dtype) && Rank(table) == 2) return true;
    }
  }
  return false;
}

// The rank-2 integer inputs apart from the pasts, sorted into their roles.
class IntegerRoles {
 public:
  IntegerRoles(const Graph& graph, DecoderSignature& signature)
      : graph_(graph), signature_(signature) {}

  void Place(std::vector<ValueId> candidates) {
    const ValueConsumers consumers(graph_);
    auto take = [&](auto&& matches) -> std::optional<ValueId> {
      const auto found = std::ranges::find_if(candidates, matches);
      if (found == candidates.end()) return std::nullopt;
      const ValueId id = *found;
      candidates.erase(found);
      return id;
    };
    auto named = [&](std::string_view part) {
      return [this, part](ValueId id) { return NameHas(graph_.value(id).name, part); };
    };
    std::optional<ValueId> ids = take(named("input_ids"));
    if (!ids) ids = take([&](ValueId id) { return IndexesEmbedding(graph_, consumers, id); });
    if (!ids) {
      signature_.problems.push_back("no integer input of rank 2 carries the token ids");
      return;
    }
    signature_.input_ids = graph_.value(*ids).name;
    const Dim& sequence = (*graph_.value(*ids).shape)[1];
    const auto like_ids = [&](ValueId id) { return (*graph_.value(id).shape)[1] == sequence; };
    std::optional<ValueId> mask = take(named("mask"));
    std::optional<ValueId> positions = take(named("position"));
    if (!mask) mask = take([&](ValueId id) { return !like_ids(id); });
    if (!positions) positions = take(like_ids);
    if (mask) signature_.attention_mask = graph_.value(*mask).name;
    if (positions) signature_.position_ids = graph_.value(*positions).name;
    for (ValueId id : candidates) Unplaced(id);
  }

  void Unplaced(ValueId id) {
    signature_.problems.push_back("input '" + graph_.value(id).name +
                                  "' is none of token ids, attention mask, position ids, cache "
                                  "position or a KV past");
  }

 private:
  const Graph& graph_;
  DecoderSignature& signature_;
};

void PlaceLogits(const Graph& graph, const std::unordered_set<ValueId>& presents,
                 DecoderSignature& signature) {
  std::vector<ValueId> candidates;
  for (ValueId id : graph.outputs) {
    const Value& value = graph.value(id);
    if (presents.contains(id) || !IsFloat(value.dtype) || Rank(value) != 3) continue;
    if (value.name == "logits") {
      signature.logits = value.name;
      return;
    }
    candidates.push_back(id);
  }
  if (candidates.size() == 1) {
    signature.logits = graph.value(candidates.front()).name;
    return;
  }
  signature.problems.push_back(candidates.empty()
                                   ? "no float output of rank 3 carries the logits"
                                   : "several float outputs of rank 3 could be the logits, "
                                     "and none is named logits");
}

// Pairs by name the pasts the trace left alone, as a cache bound at fixed
// capacity may be (a present that is its past, updated in place by the
// runtime): past_key_values.X or pastX with presentX, on the penultimate axis.
void PairByName(const Graph& graph, const std::unordered_set<ValueId>& traced,
                std::vector<KvCachePair>& pairs) {
  for (ValueId id : graph.inputs) {
    const Value& past = graph.value(id);
    if (traced.contains(id) || !past.shape || past.shape->size() < 3) continue;
    for (std::string_view prefix : {"past_key_values", "past"}) {
      if (!std::string_view(past.name).starts_with(prefix)) continue;
      const auto present = graph.FindValue("present" + past.name.substr(prefix.size()));
      if (!present || std::ranges::find(graph.outputs, *present) == graph.outputs.end()) continue;
      const Value& value = graph.value(*present);
      if (!value.shape || value.shape->size() != past.shape->size()) continue;
      const size_t axis = past.shape->size() - 2;
      pairs.push_back({id, *present, axis, axis});
      break;
    }
  }
}

}  // namespace

std::optional<RoleAxis> SymbolicAxis(const Graph& graph, const std::string& name, size_t axis) {
  const auto id = graph.FindValue(name);
  if (!id) return std::nullopt;
  const std::optional<Shape>& shape = graph.value(*id).shape;
  if (!shape || axis >= shape->size() || !(*shape)[axis].is_symbolic()) return std::nullopt;
  return RoleAxis{*id, (*shape)[axis].symbol()};
}

std::string FormatDecoderRoles(const DecoderSignature& decoder) {
  std::string text = "ids '" + decoder.input_ids + "'";
  if (!decoder.attention_mask.empty()) text += ", mask '" + decoder.attention_mask + "'";
  if (!decoder.position_ids.empty()) text += ", positions '" + decoder.position_ids + "'";
  if (!decoder.cache_position.empty()) {
    text += ", cache position '" + decoder.cache_position + "'";
  }
  if (!decoder.kv.empty()) {
    const DecoderKv& first = decoder.kv.front();
    text += "; " + std::to_string(decoder.kv.size()) + " KV pasts ('" + first.past + "' -> '" +
            first.present + "' along axis " + std::to_string(first.past_axis) +
            (decoder.kv.size() > 1 ? ", ...)" : ")");
  }
  return text + "; logits '" + decoder.logits + "'";
}

DecoderSignature DescribeDecoder(const Graph& graph) {
  DecoderSignature signature;
  std::unordered_set<ValueId> pasts;
  std::unordered_set<ValueId> presents;
  std::vector<KvCachePair> pairs = TraceKvCachePairs(graph);
  const std::unordered_set<ValueId> traced = [&] {
    std::unordered_set<ValueId> found;
    for (const KvCachePair& pair : pairs) found.insert(pair.past);
    return found;
  }();
  PairByName(graph, traced, pairs);
  std::ranges::sort(pairs, {}, [](const KvCachePair& pair) { return pair.past.index; });
  for (const KvCachePair& pair : pairs) {
    pasts.insert(pair.past);
    presents.insert(pair.present);
    signature.kv.push_back({graph.value(pair.past).name, graph.value(pair.present).name,
                            pair.past_axis, pair.present_axis, traced.contains(pair.past)});
  }
  if (signature.kv.empty()) {
    signature.problems.push_back("no graph output extends a graph input as a KV cache does");
  }
  IntegerRoles roles(graph, signature);
  std::vector<ValueId> rank2;
  for (ValueId id : graph.inputs) {
    if (pasts.contains(id)) continue;
    const Value& value = graph.value(id);
    if (IsInteger(value.dtype) && Rank(value) == 2) {
      rank2.push_back(id);
    } else if (IsInteger(value.dtype) && Rank(value) == 1 && NameHas(value.name, "position") &&
               signature.cache_position.empty()) {
      signature.cache_position = value.name;
    } else {
      roles.Unplaced(id);
    }
  }
  roles.Place(std::move(rank2));
  PlaceLogits(graph, presents, signature);
  return signature;
}

}  // namespace nxrt::graph
