// Symbols: the named unknown extents of a graph's shapes, and the records shape
// inference keeps about where each one came from (its lineage).
//
// Declared symbols come from the model (dim_params of graph inputs/outputs, or
// a fresh one for an unnamed dynamic dim). Inference mints the rest, all with
// ids at or above the graph's inference floor: a Derived symbol stands for an
// expression over other symbols and constants (seq_kv*8 from a Reshape); a
// Minted symbol is a data-dependent extent with no provenance (NonZero's
// count); an Opaque one is an extent inference gave up on (overflow, a
// negative result). At run time a Derived symbol is evaluated from its
// operands; a Minted or Opaque one is bound from the first output that has it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nxrt/graph/ids.hpp"

namespace nxrt::graph {

enum class SymbolOrigin { kDeclared, kDerived, kMinted, kOpaque };

// One operand of a derived expression: a constant or a symbol.
struct SymbolOperand {
  bool is_symbol = false;
  int64_t constant = 0;
  SymbolId symbol;

  static SymbolOperand Constant(int64_t c) { return {false, c, {}}; }
  static SymbolOperand Of(SymbolId s) { return {true, 0, s}; }
  friend bool operator==(const SymbolOperand&, const SymbolOperand&) = default;
};

// A derived extent. kAdd and kMul fold all operands; the others take exactly
// two (lhs, rhs) in order.
struct SymbolExpr {
  enum class Op { kAdd, kSub, kMul, kFloorDiv, kCeilDiv, kMod, kMin, kMax };
  Op op = Op::kAdd;
  std::vector<SymbolOperand> operands;
  friend bool operator==(const SymbolExpr&, const SymbolExpr&) = default;
};

struct Symbol {
  std::string name;  // the dim_param, or a generated name such as "seq_kv*8"
  SymbolOrigin origin = SymbolOrigin::kDeclared;
  SymbolExpr expr;  // meaningful for kDerived only
};

// What shape inference recorded about symbol lineage: the input of the
// capture classifier's closure.
struct SymbolLineage {
  // Pairs of symbols a broadcast found to denote the same extent (undirected).
  std::vector<std::pair<SymbolId, SymbolId>> unifications;
  // (derived, source) for each symbol a derived one was built from.
  std::vector<std::pair<SymbolId, SymbolId>> derivations;
  // Symbols whose extent inference could not know.
  std::vector<SymbolId> opaque;
};

}  // namespace nxrt::graph
