// The two chokepoints through which shape inference makes or relates symbols.
// BroadcastDim is the only place two extents meet in a broadcast, so it is the
// only place unifications are recorded; Lower is the only place a derived
// extent becomes a symbol, so it is the only place derivations are recorded.
// Keeping them single makes the lineage record complete by construction.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "nxrt/graph/ir.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt::graph::inference {

class SymbolInterner {
 public:
  explicit SymbolInterner(Graph& graph);

  // The extent of a broadcast of `a` with `b`:
  //  - equal dims, or static 1 against anything: the other dim;
  //  - two distinct symbols: the one with the smaller id (declared roots come
  //    first), recording the pair as a unification;
  //  - a static N > 1 against a symbol: N. Nothing is recorded: the symbol may
  //    still be 1 at run time, so binding it to N would be wrong, and the
  //    result carries no symbol that could grow;
  //  - two different static extents, neither 1: an error (the message names
  //    both extents; the caller adds the node).
  Result<Dim> BroadcastDim(Dim a, Dim b);

  // `expr` folded and interned: constants fold with checked arithmetic, an
  // expression that reduces to one operand returns it, and a structurally
  // identical expression reuses its symbol. A fresh Derived symbol records
  // (derived, source) for each symbol operand. Overflow or division by zero
  // gives an Opaque symbol.
  Dim Lower(SymbolExpr expr);

  // `d` as an operand of a SymbolExpr.
  static SymbolOperand Operand(Dim d) {
    return d.is_static() ? SymbolOperand::Constant(d.extent()) : SymbolOperand::Of(d.symbol());
  }

  // Shorthands over Lower for two operands.
  Dim Add(Dim a, Dim b);
  Dim Sub(Dim a, Dim b);
  Dim Mul(Dim a, Dim b);
  Dim FloorDiv(Dim a, Dim b);
  Dim CeilDiv(Dim a, Dim b);
  Dim Mod(Dim a, Dim b);
  Dim Max(Dim a, Dim b);
  Dim Min(Dim a, Dim b);

  // `d` as an extent: a negative static value becomes an Opaque symbol.
  Dim AsExtent(Dim d);

  // A fresh data-dependent symbol with no provenance.
  Dim Mint(std::string_view hint);
  // A fresh symbol for an extent inference could not know.
  Dim Opaque(std::string_view hint);

  // Whether `d` is provably at least 0: a static extent that is, a declared
  // dim, or a derived one built from such without subtraction. Minted and
  // opaque symbols stand for values inference did not see, so are not.
  bool NonNegative(Dim d) const;

  // The Derived expression of `symbol`, or nullptr.
  const SymbolExpr* DerivedExpr(SymbolId symbol) const;

  std::string DimText(Dim d) const;
  std::string ShapeText(const Shape& shape) const;

 private:
  struct ExprHash {
    size_t operator()(const SymbolExpr& e) const;
  };

  std::string ExprName(const SymbolExpr& expr) const;
  std::string OperandName(const SymbolOperand& operand) const;

  Graph& graph_;
  std::unordered_map<SymbolExpr, SymbolId, ExprHash> interned_;
  std::set<std::pair<uint32_t, uint32_t>> unified_;
  uint32_t fresh_counter_ = 0;
};

}  // namespace nxrt::graph::inference
