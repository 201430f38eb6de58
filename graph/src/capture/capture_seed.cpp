#include "nxrt/graph/capture_seed.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "nxrt/graph/attention_kv_slots.hpp"
#include "nxrt/graph/decoder_signature.hpp"

namespace nxrt::graph {
namespace {

constexpr size_t kKvRank = 4;

void SeedKvSlots(const Graph& graph, CaptureSeed& seed) {
  for (uint32_t n = 0; n < graph.nodes.size(); ++n) {
    const NodeId id{n};
    const Node& node = graph.nodes[n];
    const auto slots = FindKvCacheSlots(node);
    if (!slots) continue;
    for (size_t slot : slots->past_inputs) {
      const Shape* shape = InputShape(graph, node, slot);
      if (shape == nullptr) continue;
      if (auto symbol = SequenceAxisSymbol(*shape)) {
        seed.Add(*symbol, {SeedKind::kKvSlotInput, id, slot, *node.inputs[slot]});
      }
    }
    for (size_t slot : slots->present_outputs) {
      const Shape* shape = OutputShape(graph, node, slot);
      if (shape == nullptr) continue;
      if (auto symbol = SequenceAxisSymbol(*shape)) {
        seed.Add(*symbol, {SeedKind::kKvSlotOutput, id, slot, *node.outputs[slot]});
      }
    }
    for (size_t slot : slots->last_axis_outputs) {
      const Shape* shape = OutputShape(graph, node, slot);
      if (shape == nullptr) continue;
      if (auto symbol = LastAxisSymbol(*shape)) {
        seed.Add(*symbol, {SeedKind::kKvSlotLastAxis, id, slot, *node.outputs[slot]});
      }
    }
  }
}

void SeedDeclaredKvBoundary(const Graph& graph, std::span<const ValueId> boundary,
                            std::string_view prefix, SeedKind kind, CaptureSeed& seed) {
  for (ValueId id : boundary) {
    const Value* value = graph.try_value(id);
    if (value == nullptr || !value->shape || value->shape->size() != kKvRank) continue;
    if (!std::string_view(value->name).starts_with(prefix)) continue;
    if (auto symbol = SequenceAxisSymbol(*value->shape)) seed.Add(*symbol, {kind, {}, 0, id});
  }
}

void SeedDecoderSignature(const Graph& graph, const DecoderSignature& decoder, CaptureSeed& seed) {
  if (decoder.kv.empty()) return;
  bool grows = false;
  for (const DecoderKv& kv : decoder.kv) {
    const auto past = SymbolicAxis(graph, kv.past, kv.past_axis);
    grows = grows || past.has_value();
    // A pair by name is the declared-name rule's to seed.
    if (!kv.traced) continue;
    if (past) seed.Add(past->symbol, {SeedKind::kTracedPastInput, {}, 0, past->value});
    if (auto present = SymbolicAxis(graph, kv.present, kv.present_axis)) {
      seed.Add(present->symbol, {SeedKind::kTracedPresentOutput, {}, 0, present->value});
    }
  }
  // The mask spans the cached and the new tokens, unless it is as wide as
  // the token ids (a mask over the new tokens only). A cache of static
  // capacity is fed a mask as wide as the capacity, which does not grow.
  const auto mask = SymbolicAxis(graph, decoder.attention_mask, 1);
  const auto ids = SymbolicAxis(graph, decoder.input_ids, 1);
  if (grows && mask && (!ids || ids->symbol != mask->symbol)) {
    seed.Add(mask->symbol, {SeedKind::kDecoderAttentionMask, {}, 0, mask->value});
  }
}

void SeedOpaque(const Graph& graph, CaptureSeed& seed) {
  for (SymbolId symbol : graph.lineage.opaque) seed.Add(symbol, {SeedKind::kOpaque, {}, 0, {}});
  for (uint32_t s = 0; s < graph.symbols.size(); ++s) {
    if (graph.symbols[s].origin == SymbolOrigin::kOpaque) {
      seed.Add(SymbolId{s}, {SeedKind::kOpaque, {}, 0, {}});
    }
  }
}

void SeedMintedWithoutProvenance(const Graph& graph, uint32_t floor, CaptureSeed& seed) {
  std::unordered_set<SymbolId> derived;
  for (const auto& [symbol, source] : graph.lineage.derivations) derived.insert(symbol);
  const SeedOrigin origin{SeedKind::kMintedWithoutProvenance, {}, 0, {}};
  auto consider = [&](SymbolId symbol) {
    if (symbol.valid() && symbol.index >= floor && !derived.contains(symbol)) {
      seed.Add(symbol, origin);
    }
  };
  for (uint32_t s = floor; s < graph.symbols.size(); ++s) consider(SymbolId{s});
  for (const auto& [symbol, source] : graph.lineage.derivations) consider(source);
  for (const auto& [a, b] : graph.lineage.unifications) {
    consider(a);
    consider(b);
  }
}

}  // namespace

void CaptureSeed::Add(SymbolId symbol, const SeedOrigin& origin) {
  if (!symbol.valid()) return;
  if (origins.emplace(symbol, origin).second) symbols.push_back(symbol);
}

CaptureSeed CollectCaptureSeed(const Graph& graph, const DecoderSignature& decoder,
                               CaptureMode mode, std::span<const SymbolId> pinned) {
  CaptureSeed seed;
  SeedKvSlots(graph, seed);
  SeedDecoderSignature(graph, decoder, seed);
  SeedDeclaredKvBoundary(graph, graph.inputs, "past", SeedKind::kDeclaredPastInput, seed);
  SeedDeclaredKvBoundary(graph, graph.outputs, "present", SeedKind::kDeclaredPresentOutput, seed);
  SeedOpaque(graph, seed);
  if (mode == CaptureMode::kFailSafe && graph.inference_symbol_floor) {
    SeedMintedWithoutProvenance(graph, *graph.inference_symbol_floor, seed);
  }
  if (pinned.empty()) return seed;
  const std::unordered_set<SymbolId> pinned_set(pinned.begin(), pinned.end());
  CaptureSeed unpinned;
  for (SymbolId symbol : seed.symbols) {
    if (!pinned_set.contains(symbol)) {
      unpinned.Add(symbol, seed.origins.at(symbol));
    }
  }
  return unpinned;
}

}  // namespace nxrt::graph
