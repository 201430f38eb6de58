// Dimensions and shapes whose extents are static numbers or symbols.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "nxrt/graph/ids.hpp"
#include "nxrt/support/export.hpp"

namespace nxrt::graph {

// One extent: a static non-negative number, or a symbol of the graph's table.
class NXRT_API Dim {
 public:
  static Dim Static(int64_t extent) { return Dim(extent, SymbolId{}); }
  static Dim Symbolic(SymbolId symbol) { return Dim(-1, symbol); }

  bool is_static() const { return !symbol_.valid(); }
  bool is_symbolic() const { return symbol_.valid(); }
  int64_t extent() const { return extent_; }   // only when is_static()
  SymbolId symbol() const { return symbol_; }  // only when is_symbolic()

  friend bool operator==(const Dim&, const Dim&) = default;

 private:
  Dim(int64_t extent, SymbolId symbol) : extent_(extent), symbol_(symbol) {}
  int64_t extent_;
  SymbolId symbol_;
};

using Shape = std::vector<Dim>;

// Whether any dim of `shape` is one of `symbols` (a sorted or hashed set with
// a contains()).
template <typename SymbolSet>
bool ShapeReferencesAny(const Shape& shape, const SymbolSet& symbols) {
  for (const Dim& d : shape) {
    if (d.is_symbolic() && symbols.contains(d.symbol())) return true;
  }
  return false;
}

}  // namespace nxrt::graph
