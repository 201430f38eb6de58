#include "nxrt/graph/decoder_lineage.hpp"

#include <algorithm>
#include <optional>
#include <unordered_set>

namespace nxrt::graph {
SymbolLineage WithDecoderContract(const Graph& graph, const DecoderSignature& decoder) {
  SymbolLineage lineage = graph.lineage;
  const auto mask = SymbolicAxis(graph, decoder.attention_mask, 1);
  const auto ids = SymbolicAxis(graph, decoder.input_ids, 1);
  if (decoder.kv.empty() || !mask || !ids || mask->symbol == ids->symbol) return lineage;
  const SymbolId width = mask->symbol;
  const SymbolId sequence = ids->symbol;
  std::unordered_set<SymbolId> cached;
  for (const DecoderKv& kv : decoder.kv) {
    if (const auto past = SymbolicAxis(graph, kv.past, kv.past_axis)) cached.insert(past->symbol);
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
    if (is(minuend, width) && subtrahend.is_symbol && cached.contains(subtrahend.symbol)) {
      new_token_counts.insert(SymbolId{s});
      lineage.unifications.emplace_back(SymbolId{s}, sequence);
    }
  }
  std::erase_if(lineage.derivations, [&](const std::pair<SymbolId, SymbolId>& derivation) {
    return new_token_counts.contains(derivation.first);
  });
  return lineage;
}

}  // namespace nxrt::graph
