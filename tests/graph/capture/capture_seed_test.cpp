#include "nxrt/graph/capture_seed.hpp"

#include <variant>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "capture_test_graph.hpp"

namespace nxrt::graph {
namespace {

using testing::TestGraph;
using ::testing::UnorderedElementsAre;

class CaptureSeedTest : public ::testing::Test {
 protected:
  TestGraph t;
  SymbolId batch = t.Declared("batch");
  SymbolId seq = t.Declared("seq");

  CaptureSeed Seed(CaptureMode mode = CaptureMode::kDenylist, std::vector<SymbolId> pinned = {}) {
    return CollectCaptureSeed(t.graph, DescribeDecoder(t.graph), mode, pinned);
  }
  void ExpectOrigin(const CaptureSeed& seed, SymbolId symbol, SeedKind kind, NodeId node,
                    size_t slot) {
    ASSERT_TRUE(seed.Contains(symbol)) << t.graph.symbol(symbol).name;
    const SeedOrigin& origin = seed.origins.at(symbol);
    EXPECT_EQ(origin.kind, kind) << t.graph.symbol(symbol).name;
    EXPECT_EQ(origin.node, node) << t.graph.symbol(symbol).name;
    EXPECT_EQ(origin.slot, slot) << t.graph.symbol(symbol).name;
  }
};

// Each KV tensor gets its own sequence symbol, so every slot is seen apart.
struct SlotSymbols {
  SymbolId past_key, past_value, present_key, present_value;
};

SlotSymbols DistinctSlots(TestGraph& t, const TestGraph::Attention& a) {
  SlotSymbols s{t.Declared("pk"), t.Declared("pv"), t.Declared("nk"), t.Declared("nv")};
  const SymbolId batch = t.Declared("batch");
  t.graph.value(a.past_key).shape = TestGraph::MakeShape({batch, 2, s.past_key, 64});
  t.graph.value(a.past_value).shape = TestGraph::MakeShape({batch, 2, s.past_value, 64});
  t.graph.value(a.present_key).shape = TestGraph::MakeShape({batch, 2, s.present_key, 64});
  t.graph.value(a.present_value).shape = TestGraph::MakeShape({batch, 2, s.present_value, 64});
  return s;
}

TEST_F(CaptureSeedTest, GqaSeedsPastInputs3And4AndPresentOutputs1And2) {
  const auto gqa = t.Gqa("gqa", batch, 1, 1, true);
  const SlotSymbols s = DistinctSlots(t, gqa);
  const CaptureSeed seed = Seed();
  ExpectOrigin(seed, s.past_key, SeedKind::kKvSlotInput, gqa.node, 3);
  ExpectOrigin(seed, s.past_value, SeedKind::kKvSlotInput, gqa.node, 4);
  ExpectOrigin(seed, s.present_key, SeedKind::kKvSlotOutput, gqa.node, 1);
  ExpectOrigin(seed, s.present_value, SeedKind::kKvSlotOutput, gqa.node, 2);
  EXPECT_EQ(seed.symbols.size(), 4u);  // not batch, not the query's extents
}

TEST_F(CaptureSeedTest, AttentionSeedsPastInputs4And5AndPresentOutputs1And2) {
  const auto attn = t.DefaultAttention("attn", batch, 1, 1, std::nullopt);
  const SlotSymbols s = DistinctSlots(t, attn);
  const CaptureSeed seed = Seed();
  ExpectOrigin(seed, s.past_key, SeedKind::kKvSlotInput, attn.node, 4);
  ExpectOrigin(seed, s.past_value, SeedKind::kKvSlotInput, attn.node, 5);
  ExpectOrigin(seed, s.present_key, SeedKind::kKvSlotOutput, attn.node, 1);
  ExpectOrigin(seed, s.present_value, SeedKind::kKvSlotOutput, attn.node, 2);
  EXPECT_EQ(seed.symbols.size(), 4u);
}

TEST_F(CaptureSeedTest, IndexShareSeedsPastInputs3And4AndPresentOutputs1And2) {
  const auto share = t.IndexShare("share", batch, 1, 1, std::nullopt);
  const SlotSymbols s = DistinctSlots(t, share);
  const CaptureSeed seed = Seed();
  ExpectOrigin(seed, s.past_key, SeedKind::kKvSlotInput, share.node, 3);
  ExpectOrigin(seed, s.past_value, SeedKind::kKvSlotInput, share.node, 4);
  ExpectOrigin(seed, s.present_key, SeedKind::kKvSlotOutput, share.node, 1);
  ExpectOrigin(seed, s.present_value, SeedKind::kKvSlotOutput, share.node, 2);
  EXPECT_EQ(seed.symbols.size(), 4u);
}

TEST_F(CaptureSeedTest, UnrecognisedAttentionOpSeedsNothingFromItsSlots) {
  const auto gqa = t.Gqa("gqa", batch, 1, 1, true);
  DistinctSlots(t, gqa);
  t.graph.node(gqa.node).domain = "";
  EXPECT_TRUE(Seed().symbols.empty());
}

// CompressedSparseAttention: records [batch, records, width] on outputs 1 and
// 3; output 5 [batch, index_heads, query_seq, selections] at ratio 4.
class SparseAttentionSeed : public CaptureSeedTest,
                            public ::testing::WithParamInterface<const char*> {};

TEST_P(SparseAttentionSeed, SeedsRecordOutputsAndTheLastAxisOfOutput5) {
  const SymbolId records_k = t.Declared("records_k");
  const SymbolId records_v = t.Declared("records_v");
  const SymbolId other = t.Declared("other");
  const SymbolId selections = t.Declared("selections");
  const ValueId q = t.Value("q", {batch, seq, 512});
  const NodeId csa =
      t.Node("CompressedSparseAttention", GetParam(), "csa", {q, q},
             {t.Value("out", {batch, seq, 512}), t.Value("rec_k", {batch, records_k, 64}),
              t.Value("o2", {batch, other, 64}), t.Value("rec_v", {batch, records_v, 64}),
              t.Value("o4", {batch, other, 64}), t.Value("sel", {batch, 4, seq, selections})});
  const CaptureSeed seed = Seed();
  ExpectOrigin(seed, records_k, SeedKind::kKvSlotOutput, csa, 1);
  ExpectOrigin(seed, records_v, SeedKind::kKvSlotOutput, csa, 3);
  ExpectOrigin(seed, selections, SeedKind::kKvSlotLastAxis, csa, 5);
  // The query sequence (penultimate on output 5) and outputs 2 and 4 are not KV.
  EXPECT_FALSE(seed.Contains(seq));
  EXPECT_FALSE(seed.Contains(other));
}

TEST_P(SparseAttentionSeed, StaticSelectionAxisSeedsNothing) {
  const ValueId q = t.Value("q", {batch, seq, 512});
  t.Node("CompressedSparseAttention", GetParam(), "csa", {q},
         {q, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
          t.Value("sel", {batch, 4, seq, 2048})});
  EXPECT_TRUE(Seed().symbols.empty());
}

INSTANTIATE_TEST_SUITE_P(BothDomains, SparseAttentionSeed,
                         ::testing::Values("pkg.nxrt", "com.microsoft"));

TEST_F(CaptureSeedTest, DeclaredPastInputsAndPresentOutputsOfRank4AreSeeded) {
  const SymbolId past_len = t.Declared("past_len");
  const SymbolId total_len = t.Declared("total_len");
  const ValueId past = t.Input("past_key_values.0.key", {batch, 8, past_len, 64});
  const ValueId present = t.Output("present.0.key", {batch, 8, total_len, 64});
  const CaptureSeed seed = Seed();
  ASSERT_TRUE(seed.Contains(past_len));
  EXPECT_EQ(seed.origins.at(past_len).kind, SeedKind::kDeclaredPastInput);
  EXPECT_EQ(seed.origins.at(past_len).value, past);
  ASSERT_TRUE(seed.Contains(total_len));
  EXPECT_EQ(seed.origins.at(total_len).kind, SeedKind::kDeclaredPresentOutput);
  EXPECT_EQ(seed.origins.at(total_len).value, present);
  EXPECT_EQ(seed.symbols.size(), 2u);
}

// A dynamo export's cache: names the declared rule does not know, a Concat
// that appends the new rows, and a mask as wide as the cache plus them.
class TracedDecoderSeed : public CaptureSeedTest {
 protected:
  SymbolId cached = t.Declared("s85");
  SymbolId total = t.Declared("s70+s85");
  SymbolId width = t.Declared("s53");
  ValueId past, present, mask;

  void Build(std::variant<int64_t, SymbolId> cached_extent,
             std::variant<int64_t, SymbolId> total_extent) {
    const auto dim = [](std::variant<int64_t, SymbolId> d) -> testing::D {
      return std::holds_alternative<int64_t>(d) ? testing::D(std::get<int64_t>(d))
                                                : testing::D(std::get<SymbolId>(d));
    };
    const ValueId ids = t.Input("input_ids", {batch, seq});
    t.graph.value(ids).dtype = DataType::kInt64;
    mask = t.Input("attention_mask", {batch, width});
    t.graph.value(mask).dtype = DataType::kInt64;
    past = t.Input("cache.layers.0.keys", {batch, 2, dim(cached_extent), 32});
    present = t.Output("cache_out.0", {batch, 2, dim(total_extent), 32});
    const NodeId concat =
        t.Op("Concat", "append", {past, t.Value("k", {batch, 2, seq, 32})}, {present});
    Attribute axis;
    axis.name = "axis";
    axis.i = -2;
    t.graph.node(concat).attributes.push_back(axis);
  }
};

TEST_F(TracedDecoderSeed, AppendedPastAndItsPresentAndTheMaskWidthAreSeeded) {
  Build(cached, total);
  const CaptureSeed seed = Seed();
  ASSERT_TRUE(seed.Contains(cached));
  EXPECT_EQ(seed.origins.at(cached).kind, SeedKind::kTracedPastInput);
  EXPECT_EQ(seed.origins.at(cached).value, past);
  ASSERT_TRUE(seed.Contains(total));
  EXPECT_EQ(seed.origins.at(total).kind, SeedKind::kTracedPresentOutput);
  EXPECT_EQ(seed.origins.at(total).value, present);
  ASSERT_TRUE(seed.Contains(width));
  EXPECT_EQ(seed.origins.at(width).kind, SeedKind::kDecoderAttentionMask);
  EXPECT_EQ(seed.origins.at(width).value, mask);
  EXPECT_FALSE(seed.Contains(seq));
  EXPECT_FALSE(seed.Contains(batch));
}

TEST_F(TracedDecoderSeed, AMaskBesideACacheOfStaticCapacityDoesNotGrow) {
  Build(int64_t{256}, int64_t{256});
  EXPECT_TRUE(Seed().symbols.empty());
}

TEST_F(CaptureSeedTest, ConvAndRecurrentStatesAreNotGrowing) {
  const SymbolId conv_len = t.Declared("conv_len");
  t.Input("past_conv_state", {batch, 1024, conv_len});   // rank 3
  t.Input("past_recurrent_state", {batch, 8, 64, seq});  // static penultimate
  t.Output("present_conv_state", {batch, 1024, conv_len});
  EXPECT_TRUE(Seed().symbols.empty());
}

TEST_F(CaptureSeedTest, TheScanReadsPastOnInputsAndPresentOnOutputsOnly) {
  t.Input("present_cache", {batch, 8, seq, 64});
  t.Output("past_cache", {batch, 8, seq, 64});
  t.Input("key_cache", {batch, 8, seq, 64});
  EXPECT_TRUE(Seed().symbols.empty());
}

TEST_F(CaptureSeedTest, OpaqueSymbolsAreSeededInBothModes) {
  const SymbolId listed = t.Declared("overflowed");
  t.graph.lineage.opaque.push_back(listed);
  const SymbolId marked = t.graph.AddSymbol(Symbol{"negative", SymbolOrigin::kOpaque, {}});
  for (CaptureMode mode : {CaptureMode::kDenylist, CaptureMode::kFailSafe}) {
    const CaptureSeed seed = Seed(mode);
    EXPECT_THAT(seed.symbols, UnorderedElementsAre(listed, marked));
    EXPECT_EQ(seed.origins.at(listed).kind, SeedKind::kOpaque);
    EXPECT_EQ(seed.origins.at(marked).kind, SeedKind::kOpaque);
  }
}

TEST_F(CaptureSeedTest, FailSafeSeedsMintedSymbolsWithoutProvenance) {
  t.StartInference();
  const SymbolId nonzero = t.Minted("nonzero_count");
  const SymbolId flat = t.Derived("batch*seq", {batch, seq});
  EXPECT_TRUE(Seed(CaptureMode::kDenylist).symbols.empty());
  const CaptureSeed seed = Seed(CaptureMode::kFailSafe);
  EXPECT_THAT(seed.symbols, UnorderedElementsAre(nonzero));
  EXPECT_EQ(seed.origins.at(nonzero).kind, SeedKind::kMintedWithoutProvenance);
  EXPECT_FALSE(seed.Contains(flat));
  // Declared roots below the floor are trusted.
  EXPECT_FALSE(seed.Contains(batch));
}

TEST_F(CaptureSeedTest, FailSafeSeedsUnprovenancedSymbolsSeenOnlyInRecords) {
  t.StartInference();
  const SymbolId unlisted{static_cast<uint32_t>(t.graph.symbols.size() + 3)};
  t.Unify(unlisted, batch);
  const CaptureSeed seed = Seed(CaptureMode::kFailSafe);
  EXPECT_THAT(seed.symbols, UnorderedElementsAre(unlisted));
}

TEST_F(CaptureSeedTest, WithoutAFloorFailSafeSeedsWhatDenylistDoes) {
  t.Minted("nonzero_count");
  t.graph.lineage.opaque.push_back(t.Declared("overflowed"));
  t.Input("past_key", {batch, 8, seq, 64});
  ASSERT_FALSE(t.graph.inference_symbol_floor);
  EXPECT_EQ(Seed(CaptureMode::kFailSafe).symbols, Seed(CaptureMode::kDenylist).symbols);
  EXPECT_EQ(Seed(CaptureMode::kFailSafe).symbols.size(), 2u);
}

TEST_F(CaptureSeedTest, PinnedSymbolsAreNeverSeeded) {
  t.Input("past_key", {batch, 8, seq, 64});
  t.StartInference();
  const SymbolId nonzero = t.Minted("nonzero_count");
  const SymbolId opaque = t.Declared("overflowed");
  t.graph.lineage.opaque.push_back(opaque);
  const CaptureSeed seed = Seed(CaptureMode::kFailSafe, {seq, nonzero, opaque});
  EXPECT_TRUE(seed.symbols.empty());
  EXPECT_TRUE(seed.origins.empty());
}

TEST_F(CaptureSeedTest, TheFirstReasonIsKept) {
  const auto gqa = t.Gqa("gqa", batch, seq, seq, true);
  t.graph.lineage.opaque.push_back(seq);
  const CaptureSeed seed = Seed();
  ExpectOrigin(seed, seq, SeedKind::kKvSlotInput, gqa.node, 3);
  EXPECT_EQ(seed.symbols.size(), 1u);
}

}  // namespace
}  // namespace nxrt::graph
