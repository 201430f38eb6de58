// Why the capture classifier kept each ineligible node eager, by name: the
// edge (input or output slot, value name, axis) carrying a disqualifying
// symbol, the lineage path from the seed it was reached from to that symbol,
// and what made that seed disqualifying (a KV slot of a node, a declared
// past/present graph input or output, an opaque extent, a symbol minted
// without provenance). A node with no outputs says so instead.
//
// CaptureReport is the structured form a command line can turn into JSON;
// FormatCaptureReport renders it as text lines. In a path "a = b" means a and
// b were unified (the same extent) and "a -> b" that b was derived from a.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nxrt/graph/capture_classifier.hpp"
#include "nxrt/graph/ids.hpp"
#include "nxrt/graph/ir.hpp"
#include "nxrt/graph/lineage_closure.hpp"
#include "nxrt/support/export.hpp"

namespace nxrt::graph {

struct LineagePathStep {
  std::string symbol;
  std::string link;  // "unification" or "derivation" from the step before; "" for the seed
};

struct DisqualifiedEdgeReport {
  std::string side;  // "input" or "output"
  size_t slot = 0;
  std::string value;  // the value's name
  size_t axis = 0;
  std::string symbol;
  std::vector<LineagePathStep> path;  // from the seed to `symbol`
  std::string path_text;              // e.g. "seq_kv -> seq_kv*8"
  std::string root_kind;              // kv-slot-input, kv-slot-output, kv-slot-last-axis,
                                      // declared-past-input, declared-present-output,
                                      // opaque, minted-without-provenance
  std::string root;                   // the root kind in words, naming node, slot and value
};

struct NodeCaptureReport {
  uint32_t node_index = 0;
  std::string node;  // "node 'name' (domain::Op)"
  std::string op_type;
  std::string domain;
  std::string verdict;  // "no-outputs" or "disqualifying-symbol"
  std::vector<DisqualifiedEdgeReport> edges;
};

struct CaptureReport {
  std::string mode;
  size_t node_count = 0;
  size_t eligible_count = 0;
  std::vector<std::string> disqualifying;  // symbol names
  std::vector<std::string> pinned;         // symbol names
  std::vector<NodeCaptureReport> ineligible;
};

NXRT_API CaptureReport ExplainCapture(const Graph& graph, const CapturePlan& plan);

// A summary line, then one line per ineligible node naming its first
// disqualified edge, that edge's lineage path and root.
NXRT_API std::vector<std::string> FormatCaptureReport(const CaptureReport& report);

// The symbol's name (its dim_param or generated name), or "#<id>" when empty.
NXRT_API std::string SymbolName(const Graph& graph, SymbolId symbol);

// "a, b, c" for `symbols` in order.
NXRT_API std::string JoinSymbolNames(const Graph& graph, std::span<const SymbolId> symbols);

// The explained path to `symbol` as text, e.g. "seq_kv -> seq_kv*8"; "" when
// `closure` did not reach it or does not explain.
NXRT_API std::string FormatLineagePath(const Graph& graph, const LineageClosure& closure,
                                       SymbolId symbol);

}  // namespace nxrt::graph
