// A decoder's KV cache found from what its graph does: which graph output
// extends which graph input, and along which axis. Names play no part, so
// Optimum's past_key_values.N.key -> present.N.key, transformers' dynamo
// past_key_values.layers.N.keys -> cache.layers.N.keys and any other naming
// are found alike.
//
// From every floating-point graph input of rank 3 or more the trace follows
// the tensor forward through ops that only move, relabel or pick its axes
// (Identity, Cast, Transpose, Squeeze, Unsqueeze, Split, a Gather of one
// index, a one-operand Concat) to the op that appends to it: a Concat that
// joins it with other data along one of its own axes, or a recognised
// attention op (attention_kv_slots.hpp) that takes it in a past slot. It
// then follows the grown tensor on through the same ops, and through a
// Concat along another axis (GPT-2's legacy single past stacks key and
// value), to a graph output. Each path is a few ops long, so the trace stops
// after kMaxTraceOps.
#pragma once

#include <cstddef>
#include <vector>

#include "nxrt/graph/ids.hpp"
#include "nxrt/graph/ir.hpp"
#include "nxrt/support/export.hpp"

namespace nxrt::graph {

struct KvCachePair {
  ValueId past;             // a graph input
  ValueId present;          // the graph output that holds the past and the new rows
  size_t past_axis = 0;     // the growing axis, in the past's coordinates
  size_t present_axis = 0;  // the same axis, in the present's coordinates
};

inline constexpr size_t kMaxTraceOps = 12;

// Every pair of `graph`, in graph-input order; a past that reaches no output
// is left out, as is one that reaches two different outputs (ambiguous).
NXRT_API std::vector<KvCachePair> TraceKvCachePairs(const Graph& graph);

}  // namespace nxrt::graph
