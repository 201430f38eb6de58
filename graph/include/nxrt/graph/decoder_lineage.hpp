// The lineage a decoder's contract adds to what shape inference recorded.
//
// A loop that drives a decoder (decoder_signature.hpp) feeds an attention
// mask as wide as the cache plus the new tokens. Inference cannot know
// that, so a dim an exporter computes as mask width minus cached length
// (OPT's positions, a cumulative sum of the mask sliced past the cache)
// stays derived from the two growing symbols, and the capture classifier's
// closure spreads the growth from it to every dim the new-token count
// reaches. With the contract, such a symbol is the token ids' sequence
// length: it is unified with that and loses its derivations from the mask
// width and the cached length.
#pragma once

#include "nxrt/graph/decoder_signature.hpp"
#include "nxrt/graph/ir.hpp"

namespace nxrt::graph {

// `graph.lineage` with the contract of `decoder` applied; unchanged for a
// model with no KV pairs, no mask or no symbolic sequence length.
SymbolLineage WithDecoderContract(const Graph& graph, const DecoderSignature& decoder);

}  // namespace nxrt::graph
