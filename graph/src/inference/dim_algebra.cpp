#include "inference/dim_algebra.hpp"

#include <algorithm>
#include <vector>

#include "nxrt/support/checked_math.hpp"

namespace nxrt::graph::inference {
namespace {

// A product as a constant times a multiset of symbols.
struct Factors {
  int64_t constant = 1;
  std::vector<SymbolId> symbols;
  bool overflow = false;
};

void Collect(const SymbolInterner& symbols, Dim d, Factors& out) {
  if (d.is_static()) {
    auto p = CheckedMul(out.constant, d.extent());
    if (!p)
      out.overflow = true;
    else
      out.constant = *p;
    return;
  }
  const SymbolExpr* expr = symbols.DerivedExpr(d.symbol());
  if (expr == nullptr || expr->op != SymbolExpr::Op::kMul) {
    out.symbols.push_back(d.symbol());
    return;
  }
  for (const SymbolOperand& o : expr->operands) {
    Collect(symbols, o.is_symbol ? Dim::Symbolic(o.symbol) : Dim::Static(o.constant), out);
  }
}

Dim ProductOf(SymbolInterner& symbols, const std::vector<SymbolId>& factors, int64_t constant) {
  SymbolExpr expr{SymbolExpr::Op::kMul, {}};
  for (SymbolId s : factors) expr.operands.push_back(SymbolOperand::Of(s));
  expr.operands.push_back(SymbolOperand::Constant(constant));
  return symbols.Lower(std::move(expr));
}

}  // namespace

Dim Product(SymbolInterner& symbols, std::span<const Dim> dims) {
  SymbolExpr expr{SymbolExpr::Op::kMul, {}};
  for (Dim d : dims) {
    expr.operands.push_back(SymbolInterner::Operand(d));
  }
  return symbols.Lower(std::move(expr));
}

std::optional<Dim> ExactQuotient(SymbolInterner& symbols, std::span<const Dim> numerator,
                                 std::span<const Dim> denominator) {
  Factors num, den;
  for (Dim d : numerator) Collect(symbols, d, num);
  for (Dim d : denominator) Collect(symbols, d, den);
  if (num.overflow || den.overflow) return symbols.Opaque("overflow");
  if (num.constant == 0) return Dim::Static(0);
  if (den.constant == 0) return std::nullopt;
  // Cancel common symbols.
  std::sort(num.symbols.begin(), num.symbols.end());
  std::sort(den.symbols.begin(), den.symbols.end());
  std::vector<SymbolId> num_left, den_left;
  std::set_difference(num.symbols.begin(), num.symbols.end(), den.symbols.begin(),
                      den.symbols.end(), std::back_inserter(num_left));
  std::set_difference(den.symbols.begin(), den.symbols.end(), num.symbols.begin(),
                      num.symbols.end(), std::back_inserter(den_left));
  const bool divides = num.constant % den.constant == 0;
  if (den_left.empty() && divides) return ProductOf(symbols, num_left, num.constant / den.constant);
  if (den_left.empty() && num_left.empty()) return std::nullopt;
  Dim top = ProductOf(symbols, num_left, num.constant);
  Dim bottom = ProductOf(symbols, den_left, den.constant);
  return symbols.FloorDiv(top, bottom);
}

}  // namespace nxrt::graph::inference
