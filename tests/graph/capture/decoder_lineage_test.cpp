#include "nxrt/graph/decoder_lineage.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "capture_test_graph.hpp"

namespace nxrt::graph {
namespace {

using testing::TestGraph;

bool Has(const std::vector<std::pair<SymbolId, SymbolId>>& pairs, SymbolId a, SymbolId b) {
  return std::ranges::find(pairs, std::pair{a, b}) != pairs.end();
}

// OPT's positions: a cumulative sum of the mask, sliced past the cache, is
// as wide as the mask minus the cached length.
class DecoderLineageTest : public ::testing::Test {
 protected:
  TestGraph t;
  SymbolId batch = t.Declared("batch");
  SymbolId seq = t.Declared("seq");
  SymbolId past = t.Declared("past");
  SymbolId total = t.Declared("total");
  SymbolId width = t.Declared("width");
  SymbolId positions = t.Derived("width-past", {width, past});

  DecoderSignature Decoder() {
    t.graph.symbols[positions.index].expr = {SymbolExpr::Op::kSub,
                                             {SymbolOperand::Of(width), SymbolOperand::Of(past)}};
    t.Input("input_ids", {batch, seq});
    t.Input("attention_mask", {batch, width});
    t.Input("past_key_values.0.key", {batch, 2, past, 32});
    return DecoderSignature{"input_ids", "attention_mask",
                            "",          "",
                            "logits",    {{"past_key_values.0.key", "present.0.key", 2, 2}},
                            {}};
  }
};

TEST_F(DecoderLineageTest, MaskWidthLessTheCacheIsTheNewTokenCount) {
  const SymbolLineage lineage = WithDecoderContract(t.graph, Decoder());
  EXPECT_TRUE(Has(lineage.unifications, positions, seq));
  EXPECT_FALSE(Has(lineage.derivations, positions, width));
  EXPECT_FALSE(Has(lineage.derivations, positions, past));
  EXPECT_TRUE(Has(t.graph.lineage.derivations, positions, past));  // the graph's own stays
}

TEST_F(DecoderLineageTest, OtherDifferencesAndModelsWithoutACacheKeepTheirLineage) {
  DecoderSignature decoder = Decoder();
  const SymbolId other = t.Derived("total-past", {total, past});
  t.graph.symbols[other.index].expr = {SymbolExpr::Op::kSub,
                                       {SymbolOperand::Of(total), SymbolOperand::Of(past)}};
  const SymbolLineage lineage = WithDecoderContract(t.graph, decoder);
  EXPECT_TRUE(Has(lineage.derivations, other, past));
  EXPECT_FALSE(Has(lineage.unifications, other, seq));
  decoder.kv.clear();
  const SymbolLineage encoder = WithDecoderContract(t.graph, decoder);
  EXPECT_EQ(encoder.unifications, t.graph.lineage.unifications);
  EXPECT_EQ(encoder.derivations, t.graph.lineage.derivations);
}

}  // namespace
}  // namespace nxrt::graph
