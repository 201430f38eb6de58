#include "inference/symbol_interner.hpp"

#include <algorithm>
#include <optional>

#include "inference/integer_ops.hpp"
#include "nxrt/support/checked_math.hpp"

namespace nxrt::graph::inference {
namespace {

bool IsFoldingOp(SymbolExpr::Op op) {
  return op == SymbolExpr::Op::kAdd || op == SymbolExpr::Op::kMul;
}

}  // namespace

size_t SymbolInterner::ExprHash::operator()(const SymbolExpr& e) const {
  size_t h = std::hash<int>{}(static_cast<int>(e.op));
  for (const SymbolOperand& o : e.operands) {
    size_t part = o.is_symbol ? std::hash<uint32_t>{}(o.symbol.index) * 31u + 7u
                              : std::hash<int64_t>{}(o.constant);
    h = h * 1000003u ^ part;
  }
  return h;
}

SymbolInterner::SymbolInterner(Graph& graph) : graph_(graph) {
  for (uint32_t i = 0; i < graph_.symbols.size(); ++i) {
    if (graph_.symbols[i].origin == SymbolOrigin::kDerived) {
      interned_.emplace(graph_.symbols[i].expr, SymbolId{i});
    }
  }
  for (const auto& [a, b] : graph_.lineage.unifications) unified_.emplace(a.index, b.index);
}

Result<Dim> SymbolInterner::BroadcastDim(Dim a, Dim b) {
  if (a == b) return a;
  if (a.is_static() && a.extent() == 1) return b;
  if (b.is_static() && b.extent() == 1) return a;
  if (a.is_static() && b.is_static()) {
    return InvalidArgument("extents " + std::to_string(a.extent()) + " and " +
                           std::to_string(b.extent()) + " do not broadcast");
  }
  if (a.is_static()) return a;
  if (b.is_static()) return b;
  SymbolId keep = std::min(a.symbol(), b.symbol());
  SymbolId other = std::max(a.symbol(), b.symbol());
  if (unified_.emplace(keep.index, other.index).second) {
    graph_.lineage.unifications.emplace_back(keep, other);
  }
  return Dim::Symbolic(keep);
}

Dim SymbolInterner::Lower(SymbolExpr expr) {
  using Op = SymbolExpr::Op;
  if (IsFoldingOp(expr.op)) {
    int64_t constant = expr.op == Op::kAdd ? 0 : 1;
    std::vector<SymbolId> symbols;
    for (const SymbolOperand& o : expr.operands) {
      if (o.is_symbol) {
        symbols.push_back(o.symbol);
        continue;
      }
      auto folded =
          expr.op == Op::kAdd ? CheckedAdd(constant, o.constant) : CheckedMul(constant, o.constant);
      if (!folded) return Opaque("overflow");
      constant = *folded;
    }
    if (expr.op == Op::kMul && constant == 0) return Dim::Static(0);
    const int64_t neutral = expr.op == Op::kAdd ? 0 : 1;
    if (symbols.empty()) return Dim::Static(constant);
    if (symbols.size() == 1 && constant == neutral) return Dim::Symbolic(symbols[0]);
    std::sort(symbols.begin(), symbols.end());
    expr.operands.clear();
    for (SymbolId s : symbols) expr.operands.push_back(SymbolOperand::Of(s));
    if (constant != neutral) expr.operands.push_back(SymbolOperand::Constant(constant));
  } else {
    if (expr.operands.size() != 2) return Opaque("malformed");
    const SymbolOperand& l = expr.operands[0];
    const SymbolOperand& r = expr.operands[1];
    if (!l.is_symbol && !r.is_symbol) {
      std::optional<int64_t> folded = EvaluateBinary(expr.op, l.constant, r.constant);
      return folded ? Dim::Static(*folded) : Opaque("overflow");
    }
    const bool same = l == r;
    switch (expr.op) {
      case Op::kSub:
        if (same) return Dim::Static(0);
        if (!r.is_symbol && r.constant == 0) return Dim::Symbolic(l.symbol);
        break;
      case Op::kFloorDiv:
      case Op::kCeilDiv:
        if (!r.is_symbol && r.constant == 0) return Opaque("division by zero");
        if (!r.is_symbol && r.constant == 1) return Dim::Symbolic(l.symbol);
        if (!l.is_symbol && l.constant == 0) return Dim::Static(0);
        if (same) return Dim::Static(1);
        break;
      case Op::kMod:
        if (!r.is_symbol && r.constant == 0) return Opaque("division by zero");
        if (same || (!r.is_symbol && r.constant == 1)) return Dim::Static(0);
        break;
      case Op::kMin:
      case Op::kMax:
        if (same) return Dim::Symbolic(l.symbol);
        break;
      default:
        break;
    }
  }
  auto it = interned_.find(expr);
  if (it != interned_.end()) return Dim::Symbolic(it->second);
  SymbolId id = graph_.AddSymbol(Symbol{ExprName(expr), SymbolOrigin::kDerived, expr});
  interned_.emplace(std::move(expr), id);
  const SymbolExpr& stored = graph_.symbol(id).expr;
  std::vector<SymbolId> sources;
  for (const SymbolOperand& o : stored.operands) {
    if (o.is_symbol && std::find(sources.begin(), sources.end(), o.symbol) == sources.end()) {
      sources.push_back(o.symbol);
    }
  }
  for (SymbolId s : sources) graph_.lineage.derivations.emplace_back(id, s);
  return Dim::Symbolic(id);
}

Dim SymbolInterner::Add(Dim a, Dim b) {
  return Lower({SymbolExpr::Op::kAdd, {Operand(a), Operand(b)}});
}
Dim SymbolInterner::Sub(Dim a, Dim b) {
  return Lower({SymbolExpr::Op::kSub, {Operand(a), Operand(b)}});
}
Dim SymbolInterner::Mul(Dim a, Dim b) {
  return Lower({SymbolExpr::Op::kMul, {Operand(a), Operand(b)}});
}
Dim SymbolInterner::FloorDiv(Dim a, Dim b) {
  return Lower({SymbolExpr::Op::kFloorDiv, {Operand(a), Operand(b)}});
}
Dim SymbolInterner::CeilDiv(Dim a, Dim b) {
  return Lower({SymbolExpr::Op::kCeilDiv, {Operand(a), Operand(b)}});
}
Dim SymbolInterner::Mod(Dim a, Dim b) {
  return Lower({SymbolExpr::Op::kMod, {Operand(a), Operand(b)}});
}
Dim SymbolInterner::Max(Dim a, Dim b) {
  return Lower({SymbolExpr::Op::kMax, {Operand(a), Operand(b)}});
}
Dim SymbolInterner::Min(Dim a, Dim b) {
  return Lower({SymbolExpr::Op::kMin, {Operand(a), Operand(b)}});
}

Dim SymbolInterner::AsExtent(Dim d) {
  if (d.is_static() && d.extent() < 0) return Opaque("negative");
  return d;
}

Dim SymbolInterner::Mint(std::string_view hint) {
  std::string name = std::string(hint) + "_" + std::to_string(fresh_counter_++);
  return Dim::Symbolic(graph_.AddSymbol(Symbol{std::move(name), SymbolOrigin::kMinted, {}}));
}

Dim SymbolInterner::Opaque(std::string_view hint) {
  std::string name = "opaque_" + std::string(hint) + "_" + std::to_string(fresh_counter_++);
  SymbolId id = graph_.AddSymbol(Symbol{std::move(name), SymbolOrigin::kOpaque, {}});
  graph_.lineage.opaque.push_back(id);
  return Dim::Symbolic(id);
}

const SymbolExpr* SymbolInterner::DerivedExpr(SymbolId symbol) const {
  const Symbol& s = graph_.symbol(symbol);
  return s.origin == SymbolOrigin::kDerived ? &s.expr : nullptr;
}

bool SymbolInterner::NonNegative(Dim d) const {
  if (d.is_static()) return d.extent() >= 0;
  const Symbol& s = graph_.symbol(d.symbol());
  if (s.origin == SymbolOrigin::kDeclared) return true;
  if (s.origin != SymbolOrigin::kDerived || s.expr.op == SymbolExpr::Op::kSub) return false;
  for (const SymbolOperand& operand : s.expr.operands) {
    const Dim dim =
        operand.is_symbol ? Dim::Symbolic(operand.symbol) : Dim::Static(operand.constant);
    if (!NonNegative(dim)) return false;
  }
  return true;
}

std::string SymbolInterner::OperandName(const SymbolOperand& operand) const {
  if (!operand.is_symbol) return std::to_string(operand.constant);
  const Symbol& s = graph_.symbol(operand.symbol);
  if (s.origin == SymbolOrigin::kDerived) return "(" + s.name + ")";
  return s.name.empty() ? "s" + std::to_string(operand.symbol.index) : s.name;
}

std::string SymbolInterner::ExprName(const SymbolExpr& expr) const {
  using Op = SymbolExpr::Op;
  auto infix = [&](const char* sep) {
    std::string out;
    for (size_t i = 0; i < expr.operands.size(); ++i) {
      if (i) out += sep;
      out += OperandName(expr.operands[i]);
    }
    return out;
  };
  auto call = [&](const char* fn) { return std::string(fn) + "(" + infix(",") + ")"; };
  switch (expr.op) {
    case Op::kAdd:
      return infix("+");
    case Op::kSub:
      return infix("-");
    case Op::kMul:
      return infix("*");
    case Op::kFloorDiv:
      return infix("/");
    case Op::kCeilDiv:
      return call("ceildiv");
    case Op::kMod:
      return infix("%");
    case Op::kMin:
      return call("min");
    case Op::kMax:
      return call("max");
  }
  return "expr";
}

std::string SymbolInterner::DimText(Dim d) const {
  if (d.is_static()) return std::to_string(d.extent());
  const Symbol& s = graph_.symbol(d.symbol());
  return s.name.empty() ? "s" + std::to_string(d.symbol().index) : s.name;
}

std::string SymbolInterner::ShapeText(const Shape& shape) const {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ",";
    out += DimText(shape[i]);
  }
  return out + "]";
}

}  // namespace nxrt::graph::inference
