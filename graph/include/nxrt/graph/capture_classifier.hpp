// The capture classifier: which nodes may be recorded into a device graph and
// replayed while an LLM decodes, because no extent they see changes between
// decode steps.
//
// It seeds the symbols that disqualify (capture_seed.hpp, per the mode of
// capture_mode.hpp), closes the seed over the lineage records with a
// decoder's contract applied (decoder_lineage.hpp, lineage_closure.hpp), and
// removes the pinned symbols: the caller's, plus,
// when the runtime binds the KV cache at fixed capacity, the capacity KV and
// freeze-safe mask symbols (capture_pinning.hpp). Pinned symbols are left out
// of the seed and of the result, but do not stop the closure.
//
// A node is eligible when it has at least one output and no input or output
// edge carries a disqualifying symbol. Checking inputs as well as outputs
// catches a node whose output broadcast a growing dim into a stable-looking
// one; the closure over unifications catches the nodes after it, which see
// only the stable-looking symbol. A value without a shape, or an absent
// optional slot, carries nothing.
//
// NXRT_LOG_CAPTURE_SYMBOLS, when set, logs the mode, the disqualifying and the
// pinned symbols by name, at info or at the logger's level if higher, so that
// it shows.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "nxrt/graph/capture_mode.hpp"
#include "nxrt/graph/capture_seed.hpp"
#include "nxrt/graph/decoder_signature.hpp"
#include "nxrt/graph/ids.hpp"
#include "nxrt/graph/ir.hpp"
#include "nxrt/graph/lineage_closure.hpp"
#include "nxrt/support/export.hpp"

namespace nxrt::graph {

struct CaptureOptions {
  std::optional<CaptureMode> mode;  // unset: from NXRT_CAPTURE_CLASSIFIER
  // The runtime binds the KV cache at fixed capacity: pin the capacity KV and
  // freeze-safe mask symbols.
  bool fixed_capacity_kv = false;
  std::vector<SymbolId> extra_pinned;
  // Graph inputs bound as attention masks besides those named like one.
  std::vector<std::string> mask_input_names;
  // The graph's decoder signature where the caller has it; read from the
  // graph when null.
  const DecoderSignature* decoder = nullptr;
};

enum class CaptureVerdict { kEligible, kNoOutputs, kDisqualifyingSymbol };

enum class EdgeSide { kInput, kOutput };

// An edge of a node that carries a disqualifying symbol, at its first such axis.
struct DisqualifiedEdge {
  EdgeSide side = EdgeSide::kInput;
  size_t slot = 0;
  ValueId value;
  size_t axis = 0;
  SymbolId symbol;
};

struct NodeCapture {
  CaptureVerdict verdict = CaptureVerdict::kEligible;
  std::vector<DisqualifiedEdge> edges;  // inputs then outputs, in slot order

  bool eligible() const { return verdict == CaptureVerdict::kEligible; }
};

struct CapturePlan {
  CaptureMode mode = CaptureMode::kFailSafe;
  std::vector<SymbolId> disqualifying;  // sorted
  std::vector<SymbolId> pinned;         // sorted
  std::vector<NodeCapture> nodes;       // by node id
  CaptureSeed seed;
  LineageClosure closure;  // explains how each disqualifying symbol was reached

  bool Disqualifies(SymbolId symbol) const;
  bool IsEligible(NodeId node) const {
    return node.index < nodes.size() && nodes[node.index].eligible();
  }
  size_t EligibleCount() const;
};

NXRT_API CapturePlan ClassifyCapture(const Graph& graph, const CaptureOptions& options = {});

// The verdict on `node` against `disqualifying`, sorted.
NodeCapture CheckNodeCapture(const Graph& graph, const Node& node,
                             const std::vector<SymbolId>& disqualifying);

}  // namespace nxrt::graph
