// What a loop must feed a decoder and read back, found from its graph: the
// token ids, the optional attention mask, position ids and cache position,
// each KV past with the present that extends it and along which axis
// (kv_cache_pairs.hpp), and the logits.
//
// Names are hints only. The KV pairs come from the trace; a past it leaves
// alone (one a fixed-capacity runtime updates in place, passed straight to
// its present) pairs by name, past_key_values.X or pastX with presentX, on
// the penultimate axis. An integer input of rank 2 is the token ids when it
// is named input_ids or, unnamed, when it indexes an embedding table (a
// Gather from a rank-2 float constant); of the other rank-2 integer inputs,
// one named like a mask or one whose sequence axis differs from the ids' is
// the attention mask, and one named like positions or one shaped like the
// ids is the position ids. A rank-1 integer input named like a position is
// the cache position (the absolute index of each new token). The logits are
// the rank-3 float output named logits, or the only rank-3 float output that
// is no present.
//
// This covers the Optimum and transformers exports (past_key_values.N.key or
// past_key_values.layers.N.keys, with or without position_ids), ONNX Runtime
// GenAI's form, GPT-2's legacy single stacked past and the bundled decoders.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "nxrt/graph/ir.hpp"
#include "nxrt/support/export.hpp"

namespace nxrt::graph {

struct DecoderKv {
  std::string past;         // graph input
  std::string present;      // graph output
  size_t past_axis = 0;     // the growing (sequence) axis of the past
  size_t present_axis = 0;  // the same axis of the present
  bool traced = true;       // found by the trace; false when paired by name
};

struct DecoderSignature {
  std::string input_ids;
  std::string attention_mask;  // "" when the model takes none
  std::string position_ids;    // "" when the model takes none
  std::string cache_position;  // "" when the model takes none
  std::string logits;
  std::vector<DecoderKv> kv;  // in graph-input order
  // Why a loop cannot drive the model, one phrase per input or output it
  // could not place; empty when it can.
  std::vector<std::string> problems;

  bool drivable() const { return problems.empty(); }
};

// Reads the roles from `graph`, after shape inference so that intermediate
// shapes are known.
NXRT_API DecoderSignature DescribeDecoder(const Graph& graph);

// The value named `name` (a role of the signature) and the symbol on its
// `axis`; nullopt when there is no such value or the axis is static.
struct RoleAxis {
  ValueId value;
  SymbolId symbol;
};
NXRT_API std::optional<RoleAxis> SymbolicAxis(const Graph& graph, const std::string& name,
                                              size_t axis);

// The roles in one line: "ids 'input_ids', mask 'attention_mask'; 8 KV
// pasts ('past_key_values.0.key' -> 'present.0.key' along axis 2, ...);
// logits 'logits'". For a signature with KV pairs.
NXRT_API std::string FormatDecoderRoles(const DecoderSignature& decoder);

}  // namespace nxrt::graph
