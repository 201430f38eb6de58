#include "nxrt/graph/decoder_lineage.hpp"

#include <algorithm>
#include <optional>
#include <unordered_set>

namespace nxrt::graph {
namespace {

std::optional<SymbolId> SymbolAt(const Graph& graph, const std::string& name, size_t axis) {
  const auto id = graph.FindValue(name);
  if (!id) return std::nullopt;
  const std::optional<Shape>& shape = graph.value(*id).shape;
  if (!shape || axis >= shape->size() || !(*shape)[axis].is_symbolic()) return std::nullopt;
  return (*shape)[axis].symbol();
}

}  // namespace

SymbolLineage WithDecoderContract(const Graph& graph, const DecoderSignature& decoder) {
  SymbolLineage lineage = graph.lineage;
  const auto width = SymbolAt(graph, decoder.attention_mask, 1);
  const auto sequence = SymbolAt(graph, decoder.input_ids, 1);
  if (decoder.kv.empty() || !width || !sequence || *width == *sequence) return lineage;
  std::unordered_set<SymbolId> cached;
  for (const DecoderKv& kv : decoder.kv) {
    if (const auto past = SymbolAt(graph, kv.past, kv.past_axis)) cached.insert(*past);
  }
  const auto is = [](const SymbolOperand& operand, SymbolId symbol) {
    return operand.is_symbol && operand.symbol == symbol;
  };
  std::unordered_set<SymbolId> new_token_counts;
  for (uint32_t s = 0; s < graph.symbols.size(); ++s) {
    const Symbol& symbol = graph.symbols[s];
    if (symbol.origin != SymbolOrigin::kDerived || symbol.expr.op != SymbolExpr::Op::kSub ||
        symbol.expr.operands.size() != 2) {
      continue;
    }
    const SymbolOperand& minuend = symbol.expr.operands[0];
    const SymbolOperand& subtrahend = symbol.expr.operands[1];
    if (is(minuend, *width) && subtrahend.is_symbol && cached.contains(subtrahend.symbol)) {
      new_token_counts.insert(SymbolId{s});
      lineage.unifications.emplace_back(SymbolId{s}, *sequence);
    }
  }
  std::erase_if(lineage.derivations, [&](const std::pair<SymbolId, SymbolId>& derivation) {
    return new_token_counts.contains(derivation.first);
  });
  return lineage;
}

}  // namespace nxrt::graph
