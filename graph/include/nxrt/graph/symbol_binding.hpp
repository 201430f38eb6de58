// Concrete values of a graph's symbols for one run: declared symbols are bound
// from the input shapes, Derived ones are evaluated from their expressions,
// Minted and Opaque ones are bound from the first output that carries them.
// All arithmetic is overflow-checked; a binding that contradicts an earlier
// one is an error naming the symbol.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "nxrt/graph/ir.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt::graph {

class SymbolBinding {
 public:
  explicit SymbolBinding(const Graph& graph);

  // Binds `symbol` to `extent`. Binding it again to the same value is fine; to
  // another value is an error. A Derived symbol is checked against its
  // expression when its operands are known.
  Status Bind(SymbolId symbol, int64_t extent);

  // Binds every symbolic dim of `shape` from `concrete` (same rank) and checks
  // every static dim; `what` names the tensor in errors.
  Status BindShape(const Shape& shape, std::span<const int64_t> concrete, const std::string& what);

  // Evaluates, in id order, every Derived symbol whose operands are all known;
  // returns the first evaluation error after trying them all.
  Status EvaluateDerived();

  // The value of `symbol`, evaluating a Derived one on demand; nullopt when it
  // (or an operand) is unbound. An evaluation error (overflow, division by
  // zero, a negative extent) is reported as an error Result.
  Result<std::optional<int64_t>> Value(SymbolId symbol);

  // Concrete dims of `shape`; an unbound symbol is an error naming it.
  Result<std::vector<int64_t>> Resolve(const Shape& shape);

  bool IsBound(SymbolId symbol) const;

 private:
  Result<std::optional<int64_t>> Evaluate(SymbolId symbol);
  std::string SymbolLabel(SymbolId symbol) const;

  const Graph& graph_;
  std::vector<std::optional<int64_t>> values_;
};

}  // namespace nxrt::graph
