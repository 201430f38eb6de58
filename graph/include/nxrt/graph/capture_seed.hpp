// The capture classifier's seed: the symbols that disqualify a node from
// device-graph capture before the lineage closure spreads them, each with the
// first reason it was seeded, so an explanation can name its root.
//
// Both modes seed the growing symbols: the sequence axis of every recognised
// attention op's KV slots (attention_kv_slots.hpp); the growing axis of every
// KV past and present the decoder signature pairs (decoder_signature.hpp:
// the trace finds the Concat or attention op that extends the past), and,
// where one of them grows, the width of the decoder's attention mask, which
// spans the cache (a cache of static capacity has a mask as wide); the
// penultimate axis of every rank-4 graph input named past* or output named
// present* (the rank guard leaves out rank-3 convolution states; a static
// axis is a fixed recurrent state); and every opaque symbol. Fail-safe also seeds every
// symbol inference minted (id at or above the graph's inference floor) that
// no derivation record names as derived; when inference has not run there is
// no floor, and it seeds what denylist does. Pinned symbols are never seeded.
#pragma once

#include <cstddef>
#include <span>
#include <unordered_map>
#include <vector>

#include "nxrt/graph/capture_mode.hpp"
#include "nxrt/graph/decoder_signature.hpp"
#include "nxrt/graph/ids.hpp"
#include "nxrt/graph/ir.hpp"

namespace nxrt::graph {

enum class SeedKind {
  kKvSlotInput,              // node's past-KV input `slot`
  kKvSlotOutput,             // node's present-KV output `slot`, sequence axis
  kKvSlotLastAxis,           // node's output `slot`, last axis
  kDeclaredPastInput,        // graph input `value`
  kDeclaredPresentOutput,    // graph output `value`
  kTracedPastInput,          // graph input `value`, paired with a present
  kTracedPresentOutput,      // graph output `value`, extending a past
  kDecoderAttentionMask,     // graph input `value`, the decoder's mask
  kOpaque,                   // inference could not know the extent
  kMintedWithoutProvenance,  // minted by inference, from no recorded source
};

struct SeedOrigin {
  SeedKind kind = SeedKind::kOpaque;
  NodeId node;      // the KV slot kinds only
  size_t slot = 0;  // the KV slot kinds only
  ValueId value;    // the KV slot and declared kinds
};

struct CaptureSeed {
  std::vector<SymbolId> symbols;  // each once, in the order first seeded
  std::unordered_map<SymbolId, SeedOrigin> origins;

  // Seeds `symbol` for `origin` unless it is already seeded.
  void Add(SymbolId symbol, const SeedOrigin& origin);
  bool Contains(SymbolId symbol) const { return origins.contains(symbol); }
};

// The seed of `mode` for `graph`, whose decoder signature is `decoder`,
// leaving out every symbol of `pinned`.
CaptureSeed CollectCaptureSeed(const Graph& graph, const DecoderSignature& decoder,
                               CaptureMode mode, std::span<const SymbolId> pinned);

}  // namespace nxrt::graph
