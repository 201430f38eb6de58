// The lineage closure: every symbol whose extent depends on a seed symbol,
// following what shape inference recorded. Unified symbols denote the same
// extent, so a unification links them both ways; a derived symbol depends on
// its sources but not the reverse (a `batch*seq_kv` product must not make
// `batch` depend on `seq_kv`), so a derivation links source -> derived only.
//
// The search runs on a Boost.Graph compressed sparse row graph: it is built in
// one pass with two allocations and searched in time linear in symbols plus
// edges. (An adjacency_list with directed edges heap-allocates every edge and
// took over a second for a million symbols here.) In explain mode the search
// also keeps, for each reached symbol, its predecessor on the search tree, the
// link it came through and the seed it started from, so the path
// seed -> ... -> symbol can be printed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "nxrt/graph/ids.hpp"
#include "nxrt/graph/symbol.hpp"
#include "nxrt/support/export.hpp"

namespace nxrt::graph {

enum class LineageLink : uint8_t { kUnification, kDerivation };

enum class ClosureDetail { kMembership, kExplain };

class NXRT_API LineageClosure {
 public:
  // One symbol on a path, and the link it was reached through from the step
  // before it (meaningless for the first step, the seed).
  struct Step {
    SymbolId symbol;
    LineageLink via = LineageLink::kUnification;
  };

  LineageClosure() = default;

  // Closes `seeds` over `lineage`. `symbol_count` is the size of the symbol
  // table; ids past it in the records or seeds widen the search rather than
  // being dropped. Invalid ids and self-links are ignored.
  static LineageClosure Compute(const SymbolLineage& lineage, std::span<const SymbolId> seeds,
                                size_t symbol_count,
                                ClosureDetail detail = ClosureDetail::kMembership);

  bool Contains(SymbolId symbol) const {
    return symbol.index < colors_.size() && colors_[symbol.index] != 0;
  }
  // Seeds first (each once), then the rest in the order they were reached.
  const std::vector<SymbolId>& reached() const { return reached_; }
  // Directed edges of the searched graph; 0 when nothing was searched (no
  // seeds, or no records).
  size_t edge_count() const { return edge_count_; }
  bool explains() const { return !root_.empty(); }

  // Explain mode only. The seed `symbol` was reached from; invalid when the
  // symbol was not reached or the closure was computed for membership only.
  SymbolId RootOf(SymbolId symbol) const;
  // Seed first, `symbol` last; empty when RootOf would be invalid.
  std::vector<Step> PathTo(SymbolId symbol) const;

 private:
  std::vector<uint8_t> colors_;  // the search's colour per symbol; 0 (white): not reached
  std::vector<SymbolId> reached_;
  size_t edge_count_ = 0;
  // Indexed by symbol; filled in explain mode only.
  std::vector<uint32_t> predecessor_;
  std::vector<uint32_t> root_;
  std::vector<LineageLink> via_;
};

}  // namespace nxrt::graph
