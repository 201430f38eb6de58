#include "nxrt/graph/symbol_binding.hpp"

#include "inference/integer_ops.hpp"

namespace nxrt::graph {

SymbolBinding::SymbolBinding(const Graph& graph) : graph_(graph), values_(graph.symbols.size()) {}

std::string SymbolBinding::SymbolLabel(SymbolId symbol) const {
  const std::string& name = graph_.symbol(symbol).name;
  return "symbol '" + (name.empty() ? "#" + std::to_string(symbol.index) : name) + "'";
}

bool SymbolBinding::IsBound(SymbolId symbol) const {
  return symbol.index < values_.size() && values_[symbol.index].has_value();
}

Status SymbolBinding::Bind(SymbolId symbol, int64_t extent) {
  if (symbol.index >= values_.size()) {
    return InvalidArgument("symbol id " + std::to_string(symbol.index) + " is not in the graph");
  }
  if (extent < 0) {
    return InvalidArgument(SymbolLabel(symbol) + " bound to negative extent " +
                           std::to_string(extent) + "; check the input shapes");
  }
  NXRT_ASSIGN_OR_RETURN(std::optional<int64_t> expected, Evaluate(symbol));
  if (expected && *expected != extent) {
    return InvalidArgument(SymbolLabel(symbol) + " is " + std::to_string(*expected) +
                           " but a tensor has " + std::to_string(extent) +
                           "; make the input shapes agree");
  }
  values_[symbol.index] = extent;
  return Status::Ok();
}

Status SymbolBinding::BindShape(const Shape& shape, std::span<const int64_t> concrete,
                                const std::string& what) {
  if (shape.size() != concrete.size()) {
    return InvalidArgument(what + ": rank " + std::to_string(concrete.size()) + " given, " +
                           std::to_string(shape.size()) + " expected; fix the tensor's shape");
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].is_static()) {
      if (shape[i].extent() != concrete[i]) {
        return InvalidArgument(what + ": dim " + std::to_string(i) + " is " +
                               std::to_string(concrete[i]) + ", expected " +
                               std::to_string(shape[i].extent()) + "; fix the tensor's shape");
      }
      continue;
    }
    Status s = Bind(shape[i].symbol(), concrete[i]);
    if (!s.ok()) return s.WithContext(what + " dim " + std::to_string(i));
  }
  return Status::Ok();
}

Status SymbolBinding::EvaluateDerived() {
  // One failing symbol does not keep the others unevaluated.
  Status first_error;
  for (uint32_t i = 0; i < graph_.symbols.size(); ++i) {
    if (graph_.symbols[i].origin != SymbolOrigin::kDerived) continue;
    auto v = Evaluate(SymbolId{i});
    if (!v.ok() && first_error.ok()) first_error = v.status();
  }
  return first_error;
}

Result<std::optional<int64_t>> SymbolBinding::Value(SymbolId symbol) {
  return Evaluate(symbol);
}

Result<std::optional<int64_t>> SymbolBinding::Evaluate(SymbolId symbol) {
  if (symbol.index >= values_.size()) {
    return InvalidArgument("symbol id " + std::to_string(symbol.index) + " is not in the graph");
  }
  if (values_[symbol.index]) return values_[symbol.index];
  const Symbol& s = graph_.symbol(symbol);
  if (s.origin != SymbolOrigin::kDerived) return std::optional<int64_t>();
  std::vector<int64_t> operands;
  for (const SymbolOperand& o : s.expr.operands) {
    if (!o.is_symbol) {
      operands.push_back(o.constant);
      continue;
    }
    // Derived symbols only refer to earlier ids, so this recursion ends.
    if (o.symbol.index >= symbol.index) {
      return Internal(SymbolLabel(symbol) + " refers to a later symbol; rerun shape inference");
    }
    NXRT_ASSIGN_OR_RETURN(std::optional<int64_t> v, Evaluate(o.symbol));
    if (!v) return std::optional<int64_t>();
    operands.push_back(*v);
  }
  if (operands.empty()) return InvalidArgument(SymbolLabel(symbol) + " has no operands");
  std::optional<int64_t> acc = operands[0];
  for (size_t i = 1; i < operands.size() && acc; ++i) {
    acc = inference::EvaluateBinary(s.expr.op, *acc, operands[i]);
  }
  if (!acc) {
    return InvalidArgument(SymbolLabel(symbol) +
                           " overflows or divides by zero; check the input shapes");
  }
  if (*acc < 0) {
    return InvalidArgument(SymbolLabel(symbol) + " evaluates to negative extent " +
                           std::to_string(*acc) + "; check the input shapes");
  }
  values_[symbol.index] = *acc;
  return acc;
}

Result<std::vector<int64_t>> SymbolBinding::Resolve(const Shape& shape) {
  std::vector<int64_t> out;
  out.reserve(shape.size());
  for (const Dim& d : shape) {
    if (d.is_static()) {
      out.push_back(d.extent());
      continue;
    }
    NXRT_ASSIGN_OR_RETURN(std::optional<int64_t> v, Evaluate(d.symbol()));
    if (!v)
      return FailedPrecondition(SymbolLabel(d.symbol()) + " is not bound yet; bind the " +
                                "inputs (or the output that carries it) first");
    out.push_back(*v);
  }
  return out;
}

}  // namespace nxrt::graph
