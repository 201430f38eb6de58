// Where the KV cache lives on the attention ops the capture classifier knows.
//
// A KV cache is laid out [batch, kv_heads, sequence, head_dim]; its sequence
// axis, the penultimate one, grows by the new tokens at every decode step, so
// a symbol there changes extent between replays of a captured device graph.
// These are the slots that carry such an axis for each recognised op:
//   com.microsoft GroupQueryAttention   past inputs 3,4   present outputs 1,2
//   Attention (default domain)          past inputs 4,5   present outputs 1,2
//   pkg.nxrt IndexShare                 past inputs 3,4   present outputs 1,2
//   CompressedSparseAttention           no past inputs    present outputs 1,3
//     (pkg.nxrt or com.microsoft)                         + last axis of output 5
// CompressedSparseAttention keeps its cache as device state; its cache record
// outputs are [batch, records, width] with records penultimate, and its ratio-4
// form adds a growing selection count as the last axis of output 5. An op not
// listed here is still caught by the classifier's scan of past*/present* graph
// inputs and outputs.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

#include "nxrt/graph/ids.hpp"
#include "nxrt/graph/ir.hpp"
#include "nxrt/graph/shape.hpp"

namespace nxrt::graph {

struct KvCacheSlots {
  std::span<const size_t> past_inputs;        // sequence axis penultimate
  std::span<const size_t> present_outputs;    // sequence axis penultimate
  std::span<const size_t> last_axis_outputs;  // growing extent on the last axis
};

// The KV slots of `node`, or nullopt when it is not a recognised attention op.
std::optional<KvCacheSlots> FindKvCacheSlots(const Node& node);

// The symbol on the penultimate (sequence) axis of `shape`; nullopt for rank
// below 2 or a static axis, which is a fixed-size recurrent state.
std::optional<SymbolId> SequenceAxisSymbol(const Shape& shape);

// The symbol on the last axis of `shape`; nullopt for rank 0 or a static axis.
std::optional<SymbolId> LastAxisSymbol(const Shape& shape);

// The shape of `node`'s input or output at `slot`; nullptr when the slot is
// absent or its value has no known shape.
const Shape* InputShape(const Graph& graph, const Node& node, size_t slot);
const Shape* OutputShape(const Graph& graph, const Node& node, size_t slot);

}  // namespace nxrt::graph
