#include "nxrt/graph/capture_classifier.hpp"

#include <sstream>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include "capture_test_graph.hpp"
#include "nxrt/support/log.hpp"
#include "scoped_env.hpp"

namespace nxrt::graph {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::ScopedEnv;
using testing::TestGraph;

class CaptureClassifierTest : public ::testing::Test {
 protected:
  TestGraph t;
  SymbolId batch = t.Declared("batch");
  SymbolId seq_kv = t.Declared("seq_kv");

  // Growing: a declared past input whose sequence axis is seq_kv.
  ValueId AddGrowingKv() { return t.Input("past_key", {batch, 8, seq_kv, 64}); }

  CapturePlan Classify(CaptureMode mode, CaptureOptions options = {}) {
    options.mode = mode;
    return ClassifyCapture(t.graph, options);
  }
};

TEST_F(CaptureClassifierTest, NodesWithoutGrowingSymbolsAreEligible) {
  AddGrowingKv();
  const ValueId x = t.Input("x", {batch, 64});
  const NodeId relu = t.Op("Relu", "relu", {x}, {t.Value("y", {batch, 64})});
  const CapturePlan plan = Classify(CaptureMode::kDenylist);
  EXPECT_TRUE(plan.IsEligible(relu));
  EXPECT_THAT(plan.disqualifying, ElementsAre(seq_kv));
}

TEST_F(CaptureClassifierTest, AGrowingSymbolOnAnOutputDisqualifies) {
  const ValueId past = AddGrowingKv();
  const NodeId shape = t.Op("Transpose", "t", {t.Input("x", {batch, 64})},
                            {t.Value("kv_t", {batch, 8, 64, seq_kv})});
  const NodeId reader = t.Op("Relu", "r", {past}, {t.Value("y", {batch, 8, seq_kv, 64})});
  const CapturePlan plan = Classify(CaptureMode::kDenylist);
  ASSERT_FALSE(plan.IsEligible(shape));
  EXPECT_EQ(plan.nodes[shape.index].verdict, CaptureVerdict::kDisqualifyingSymbol);
  ASSERT_EQ(plan.nodes[shape.index].edges.size(), 1u);
  const DisqualifiedEdge& edge = plan.nodes[shape.index].edges[0];
  EXPECT_EQ(edge.side, EdgeSide::kOutput);
  EXPECT_EQ(edge.slot, 0u);
  EXPECT_EQ(edge.axis, 3u);
  EXPECT_EQ(edge.symbol, seq_kv);
  EXPECT_EQ(plan.nodes[reader.index].edges.size(), 2u);
}

TEST_F(CaptureClassifierTest, BroadcastOfKvIntoBatchIsCaughtOnTheInputEdge) {
  // [seq_kv, D] + [batch, D] -> [batch, D] with no unification recorded: the
  // output looks stable, the input does not.
  AddGrowingKv();
  const ValueId a = t.Value("kv_rows", {seq_kv, 64});
  const ValueId b = t.Input("x", {batch, 64});
  const NodeId add = t.Op("Add", "add", {a, b}, {t.Value("sum", {batch, 64})});
  const CapturePlan plan = Classify(CaptureMode::kDenylist);
  ASSERT_FALSE(plan.IsEligible(add));
  ASSERT_EQ(plan.nodes[add.index].edges.size(), 1u);
  EXPECT_EQ(plan.nodes[add.index].edges[0].side, EdgeSide::kInput);
  EXPECT_EQ(plan.nodes[add.index].edges[0].slot, 0u);
}

TEST_F(CaptureClassifierTest, ADownstreamConsumerOfTheRepresentativeIsIneligible) {
  AddGrowingKv();
  const ValueId a = t.Value("kv_rows", {seq_kv, 64});
  const ValueId b = t.Input("x", {batch, 64});
  const ValueId sum = t.Value("sum", {batch, 64});
  t.Op("Add", "add", {a, b}, {sum});
  const NodeId relu = t.Op("Relu", "relu", {sum}, {t.Value("y", {batch, 64})});
  EXPECT_TRUE(Classify(CaptureMode::kDenylist).IsEligible(relu));
  t.Unify(seq_kv, batch);
  const CapturePlan plan = Classify(CaptureMode::kDenylist);
  EXPECT_FALSE(plan.IsEligible(relu));
  EXPECT_TRUE(plan.Disqualifies(batch));
}

TEST_F(CaptureClassifierTest, UnificationIsFollowedInBothDirections) {
  AddGrowingKv();
  const SymbolId other = t.Declared("other");
  t.Unify(other, seq_kv);
  const NodeId relu = t.Op("Relu", "relu", {t.Input("x", {other, 4})}, {t.Value("y", {other, 4})});
  EXPECT_FALSE(Classify(CaptureMode::kDenylist).IsEligible(relu));
}

TEST_F(CaptureClassifierTest, ADerivedKvProductIsIneligible) {
  const ValueId past = AddGrowingKv();
  t.StartInference();
  const SymbolId flat = t.Derived("seq_kv*8", {seq_kv});
  const ValueId flattened = t.Value("flat", {flat});
  t.Op("Reshape", "reshape", {past, t.Value("shape", {1})}, {flattened});
  const NodeId relu = t.Op("Relu", "relu", {flattened}, {t.Value("y", {flat})});
  for (CaptureMode mode : {CaptureMode::kDenylist, CaptureMode::kFailSafe}) {
    const CapturePlan plan = Classify(mode);
    EXPECT_FALSE(plan.IsEligible(relu)) << CaptureModeName(mode);
    EXPECT_TRUE(plan.Disqualifies(flat)) << CaptureModeName(mode);
  }
}

TEST_F(CaptureClassifierTest, AProductDoesNotPoisonItsStableFactor) {
  AddGrowingKv();
  t.StartInference();
  const SymbolId product = t.Derived("batch*seq_kv", {batch, seq_kv});
  const NodeId on_batch =
      t.Op("Relu", "on_batch", {t.Input("x", {batch, 64})}, {t.Value("y", {batch, 64})});
  const NodeId on_product =
      t.Op("Relu", "on_product", {t.Value("p", {product})}, {t.Value("q", {product})});
  for (CaptureMode mode : {CaptureMode::kDenylist, CaptureMode::kFailSafe}) {
    const CapturePlan plan = Classify(mode);
    EXPECT_FALSE(plan.Disqualifies(batch)) << CaptureModeName(mode);
    EXPECT_TRUE(plan.IsEligible(on_batch)) << CaptureModeName(mode);
    EXPECT_FALSE(plan.IsEligible(on_product)) << CaptureModeName(mode);
  }
}

TEST_F(CaptureClassifierTest, DataDependentMintedSymbolDependsOnTheMode) {
  t.StartInference();
  const SymbolId count = t.Minted("nonzero_count");
  const ValueId x = t.Input("x", {batch, 64});
  const NodeId nonzero = t.Op("NonZero", "nonzero", {x}, {t.Value("idx", {2, count})});
  EXPECT_FALSE(Classify(CaptureMode::kFailSafe).IsEligible(nonzero));
  EXPECT_TRUE(Classify(CaptureMode::kDenylist).IsEligible(nonzero));
}

TEST_F(CaptureClassifierTest, MintedSymbolTracedToStableRootsStaysEligibleInFailSafe) {
  AddGrowingKv();
  const SymbolId heads = t.Declared("heads");
  t.StartInference();
  const SymbolId flat = t.Derived("batch*heads", {batch, heads});
  const NodeId reshape =
      t.Op("Reshape", "reshape", {t.Input("x", {batch, heads, 64})}, {t.Value("y", {flat, 64})});
  const CapturePlan plan = Classify(CaptureMode::kFailSafe);
  EXPECT_TRUE(plan.IsEligible(reshape));
  EXPECT_FALSE(plan.Disqualifies(flat));
}

TEST_F(CaptureClassifierTest, WithoutInferenceFailSafeDisqualifiesWhatDenylistDoes) {
  AddGrowingKv();
  const SymbolId data = t.graph.AddSymbol(Symbol{"nonzero_count", SymbolOrigin::kMinted, {}});
  const NodeId nonzero =
      t.Op("NonZero", "nonzero", {t.Input("x", {batch, 64})}, {t.Value("idx", {2, data})});
  const CapturePlan fail_safe = Classify(CaptureMode::kFailSafe);
  const CapturePlan denylist = Classify(CaptureMode::kDenylist);
  EXPECT_EQ(fail_safe.disqualifying, denylist.disqualifying);
  EXPECT_THAT(fail_safe.disqualifying, ElementsAre(seq_kv));
  EXPECT_TRUE(fail_safe.IsEligible(nonzero));
  EXPECT_EQ(fail_safe.mode, CaptureMode::kFailSafe);
}

TEST_F(CaptureClassifierTest, OpaqueSymbolsDisqualifyInBothModes) {
  const SymbolId opaque = t.Declared("overflowed");
  t.graph.lineage.opaque.push_back(opaque);
  const SymbolId derived = t.Derived("overflowed+1", {opaque});
  const NodeId node =
      t.Op("Relu", "relu", {t.Input("x", {derived, 4})}, {t.Value("y", {derived, 4})});
  for (CaptureMode mode : {CaptureMode::kDenylist, CaptureMode::kFailSafe}) {
    EXPECT_FALSE(Classify(mode).IsEligible(node)) << CaptureModeName(mode);
  }
}

TEST_F(CaptureClassifierTest, PinnedSymbolsLeaveTheSeedAndTheResult) {
  const ValueId past = AddGrowingKv();
  t.StartInference();
  const SymbolId flat = t.Derived("seq_kv*8", {seq_kv});
  const NodeId reader = t.Op("Relu", "relu", {past}, {t.Value("y", {batch, 8, seq_kv, 64})});
  const NodeId on_flat = t.Op("Relu", "flat", {t.Value("f", {flat})}, {t.Value("g", {flat})});
  CaptureOptions options;
  options.extra_pinned = {seq_kv};
  const CapturePlan plan = Classify(CaptureMode::kFailSafe, options);
  EXPECT_THAT(plan.pinned, ElementsAre(seq_kv));
  EXPECT_FALSE(plan.seed.Contains(seq_kv));
  EXPECT_THAT(plan.disqualifying, IsEmpty());
  EXPECT_TRUE(plan.IsEligible(reader));
  EXPECT_TRUE(plan.IsEligible(on_flat));
}

TEST_F(CaptureClassifierTest, APinnedSymbolReachedFromAnotherSeedIsDroppedButPassedThrough) {
  AddGrowingKv();
  const SymbolId capacity = t.Declared("capacity");
  t.Unify(seq_kv, capacity);
  t.StartInference();
  const SymbolId beyond = t.Derived("capacity*2", {capacity});
  CaptureOptions options;
  options.extra_pinned = {capacity};
  const CapturePlan plan = Classify(CaptureMode::kDenylist, options);
  EXPECT_FALSE(plan.Disqualifies(capacity));
  EXPECT_TRUE(plan.Disqualifies(seq_kv));
  EXPECT_TRUE(plan.Disqualifies(beyond));
}

TEST_F(CaptureClassifierTest, CapacityFormKvIsPinnedOnlyWhenBoundAtFixedCapacity) {
  const SymbolId max_len = t.Declared("max_len");
  const auto gqa = t.Gqa("gqa", batch, max_len, max_len, /*with_seqlens_k=*/true);
  CaptureOptions fixed;
  fixed.fixed_capacity_kv = true;
  const CapturePlan pinned = Classify(CaptureMode::kFailSafe, fixed);
  EXPECT_THAT(pinned.pinned, ElementsAre(max_len));
  EXPECT_TRUE(pinned.IsEligible(gqa.node));
  const CapturePlan growing = Classify(CaptureMode::kFailSafe);
  EXPECT_THAT(growing.pinned, IsEmpty());
  EXPECT_FALSE(growing.IsEligible(gqa.node));
}

TEST_F(CaptureClassifierTest, GrowingFormGqaStaysVetoedAtFixedCapacity) {
  const SymbolId past_len = t.Declared("past_len");
  const SymbolId total_len = t.Declared("total_len");
  const auto gqa = t.Gqa("gqa", batch, past_len, total_len, true);
  const auto no_seqlens = t.Gqa("gqa2", batch, seq_kv, seq_kv, false);
  CaptureOptions fixed;
  fixed.fixed_capacity_kv = true;
  const CapturePlan plan = Classify(CaptureMode::kFailSafe, fixed);
  EXPECT_THAT(plan.pinned, IsEmpty());
  EXPECT_FALSE(plan.IsEligible(gqa.node));
  EXPECT_FALSE(plan.IsEligible(no_seqlens.node));
  EXPECT_TRUE(plan.Disqualifies(past_len));
  EXPECT_TRUE(plan.Disqualifies(total_len));
}

// attention_mask [batch, mask_len] -> Cast -> CumSum -> Slice (inference mints
// an unprovenanced frontier) -> Unsqueeze -> bias [batch, 1, 1, max_len] ->
// capacity-form Attention -> Where, whose output carries another minted
// extent. Only the cone before the attention is freeze-safe.
class MaskConeClassification : public CaptureClassifierTest {
 protected:
  SymbolId max_len = t.Declared("max_len");
  SymbolId mask_len = t.Declared("mask_len");
  ValueId mask = t.Input("attention_mask", {batch, mask_len});
  ValueId axis = t.Value("axis", {});
  void SetUp() override {
    t.StartInference();
    frontier = t.Minted("frontier");
    after_len = t.Minted("after_len");
    const ValueId as_float = t.Value("mask_f", {batch, mask_len});
    const ValueId prefix = t.Value("prefix", {batch, mask_len});
    const ValueId sliced = t.Value("sliced", {batch, frontier});
    const ValueId bias = t.Value("bias", {batch, 1, 1, max_len});
    cast = t.Op("Cast", "cast", {mask}, {as_float});
    t.Op("CumSum", "cumsum", {as_float, axis}, {prefix});
    slice = t.Op("Slice", "slice", {prefix, axis, axis}, {sliced});
    unsqueeze = t.Op("Unsqueeze", "unsqueeze", {sliced, axis}, {bias});
    attn = t.DefaultAttention("attn", batch, max_len, max_len, bias);
    const ValueId attn_out = t.graph.node(attn.node).outputs[0].value();
    after = t.Op("Where", "after", {attn_out, attn_out, attn_out},
                 {t.Value("after_out", {batch, 8, after_len, 64})});
  }
  SymbolId frontier, after_len;
  NodeId cast, slice, unsqueeze, after;
  TestGraph::Attention attn;
};

TEST_F(MaskConeClassification, FixedCapacityPinsTheConeUpToTheAttention) {
  CaptureOptions fixed;
  fixed.fixed_capacity_kv = true;
  const CapturePlan plan = Classify(CaptureMode::kFailSafe, fixed);
  EXPECT_THAT(plan.pinned, ElementsAre(batch, max_len, mask_len, frontier));
  EXPECT_TRUE(plan.IsEligible(cast));
  EXPECT_TRUE(plan.IsEligible(slice));
  EXPECT_TRUE(plan.IsEligible(unsqueeze));
  EXPECT_TRUE(plan.IsEligible(attn.node));
  // Past the attention nothing is pinned: the Where keeps its minted extent.
  EXPECT_TRUE(plan.Disqualifies(after_len));
  EXPECT_FALSE(plan.IsEligible(after));
}

TEST_F(MaskConeClassification, WithoutFixedCapacityTheConeStaysEager) {
  const CapturePlan plan = Classify(CaptureMode::kFailSafe);
  EXPECT_THAT(plan.pinned, IsEmpty());
  EXPECT_FALSE(plan.IsEligible(slice));
  EXPECT_FALSE(plan.IsEligible(unsqueeze));
  EXPECT_FALSE(plan.IsEligible(attn.node));
}

TEST_F(MaskConeClassification, AMaskBoundByOptionIsFollowedToo) {
  t.graph.value(mask).name = "padding";
  CaptureOptions fixed;
  fixed.fixed_capacity_kv = true;
  EXPECT_FALSE(Classify(CaptureMode::kFailSafe, fixed).IsEligible(slice));
  fixed.mask_input_names = {"padding"};
  EXPECT_TRUE(Classify(CaptureMode::kFailSafe, fixed).IsEligible(slice));
}

TEST_F(CaptureClassifierTest, ANodeWithNoOutputsIsIneligible) {
  const NodeId sink = t.Op("Print", "sink", {t.Input("x", {4})}, {});
  const NodeId absent = t.Op("Print", "absent", {t.Input("z", {4})}, {std::nullopt});
  const CapturePlan plan = Classify(CaptureMode::kDenylist);
  EXPECT_FALSE(plan.IsEligible(sink));
  EXPECT_EQ(plan.nodes[sink.index].verdict, CaptureVerdict::kNoOutputs);
  EXPECT_EQ(plan.nodes[absent.index].verdict, CaptureVerdict::kNoOutputs);
}

TEST_F(CaptureClassifierTest, UnshapedValuesAndAbsentSlotsCarryNothing) {
  AddGrowingKv();
  const NodeId node = t.Op("Foo", "foo", {t.Unshaped("u"), std::nullopt, t.Input("x", {batch})},
                           {t.Unshaped("v"), std::nullopt});
  EXPECT_TRUE(Classify(CaptureMode::kDenylist).IsEligible(node));
}

TEST_F(CaptureClassifierTest, EveryDisqualifiedEdgeIsListedInSlotOrder) {
  const auto gqa = t.Gqa("gqa", batch, seq_kv, seq_kv, true);
  const CapturePlan plan = Classify(CaptureMode::kDenylist);
  std::vector<std::pair<EdgeSide, size_t>> edges;
  for (const auto& e : plan.nodes[gqa.node.index].edges) edges.emplace_back(e.side, e.slot);
  EXPECT_THAT(edges, ElementsAre(std::pair{EdgeSide::kInput, size_t{3}},
                                 std::pair{EdgeSide::kInput, size_t{4}},
                                 std::pair{EdgeSide::kOutput, size_t{1}},
                                 std::pair{EdgeSide::kOutput, size_t{2}}));
}

TEST_F(CaptureClassifierTest, ModeComesFromTheVariableUnlessTheOptionIsSet) {
  t.StartInference();
  const SymbolId count = t.Minted("nonzero_count");
  const NodeId nonzero =
      t.Op("NonZero", "nonzero", {t.Input("x", {batch})}, {t.Value("i", {1, count})});
  ScopedEnv env("NXRT_CAPTURE_CLASSIFIER", "denylist");
  const CapturePlan from_env = ClassifyCapture(t.graph, {});
  EXPECT_EQ(from_env.mode, CaptureMode::kDenylist);
  EXPECT_TRUE(from_env.IsEligible(nonzero));
  CaptureOptions explicit_mode;
  explicit_mode.mode = CaptureMode::kFailSafe;
  const CapturePlan from_option = ClassifyCapture(t.graph, explicit_mode);
  EXPECT_EQ(from_option.mode, CaptureMode::kFailSafe);
  EXPECT_FALSE(from_option.IsEligible(nonzero));
}

class CaptureLogTest : public CaptureClassifierTest {
 protected:
  // Shows only errors, so the line must be raised to be seen.
  void SetUp() override {
    previous_level_ = GetLogger()->level();
    GetLogger()->set_level(spdlog::level::err);
    sink_ = std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_);
    GetLogger()->sinks().push_back(sink_);
  }
  void TearDown() override {
    auto& sinks = GetLogger()->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
    GetLogger()->set_level(previous_level_);
  }
  std::ostringstream stream_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
  spdlog::level::level_enum previous_level_ = spdlog::level::warn;
};

TEST_F(CaptureLogTest, LogsTheSetByNameWhenAsked) {
  AddGrowingKv();
  const SymbolId capacity = t.Declared("capacity");
  CaptureOptions options;
  options.extra_pinned = {capacity};
  ScopedEnv env("NXRT_LOG_CAPTURE_SYMBOLS", "1");
  Classify(CaptureMode::kDenylist, options);
  GetLogger()->flush();
  const std::string text = stream_.str();
  EXPECT_THAT(text, HasSubstr("denylist"));
  EXPECT_THAT(text, HasSubstr("1 disqualifying"));
  EXPECT_THAT(text, HasSubstr("[seq_kv]"));
  EXPECT_THAT(text, HasSubstr("pinned: [capacity]"));
}

TEST_F(CaptureLogTest, RespectsLoggingTurnedOff) {
  AddGrowingKv();
  ScopedEnv env("NXRT_LOG_CAPTURE_SYMBOLS", "1");
  GetLogger()->set_level(spdlog::level::off);
  Classify(CaptureMode::kDenylist);
  GetLogger()->flush();
  EXPECT_THAT(stream_.str(), Not(HasSubstr("seq_kv")));
}

TEST_F(CaptureLogTest, StaysQuietOtherwise) {
  AddGrowingKv();
  ScopedEnv env("NXRT_LOG_CAPTURE_SYMBOLS", std::nullopt);
  Classify(CaptureMode::kDenylist);
  GetLogger()->flush();
  EXPECT_THAT(stream_.str(), Not(HasSubstr("seq_kv")));
}

}  // namespace
}  // namespace nxrt::graph
