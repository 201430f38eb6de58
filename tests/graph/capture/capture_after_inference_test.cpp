// The classifier on lineage written by shape inference rather than by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "attribute_builders.hpp"
#include "capture_test_graph.hpp"
#include "nxrt/graph/capture_classifier.hpp"
#include "nxrt/graph/capture_explain.hpp"
#include "nxrt/graph/shape_inference.hpp"

namespace nxrt::graph {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::TestGraph;

using nxrt_test::IntAttribute;

class CaptureAfterInference : public ::testing::Test {
 protected:
  TestGraph t;
  SymbolId batch = t.Declared("batch");
  SymbolId seq = t.Declared("seq");

  void SetUp() override {
    t.graph.opset_imports[""] = 21;
    t.graph.opset_imports["com.microsoft"] = 1;
  }
  void Infer() {
    const Status status = InferShapes(t.graph);
    ASSERT_TRUE(status.ok()) << status.ToString();
    ASSERT_TRUE(t.graph.inference_symbol_floor.has_value());
  }
  CapturePlan Classify(CaptureMode mode, bool fixed_capacity_kv = false) {
    CaptureOptions options;
    options.mode = mode;
    options.fixed_capacity_kv = fixed_capacity_kv;
    return ClassifyCapture(t.graph, options);
  }
  NodeId Gqa(ValueId past_key, ValueId past_value, std::optional<ValueId> seqlens_k,
             ValueId present_key, ValueId present_value) {
    const ValueId query = t.Input("query", {batch, 1, 512});
    const ValueId key = t.Input("key", {batch, 1, 128});
    const ValueId value = t.Input("value", {batch, 1, 128});
    const ValueId total = t.Int64s("total_sequence_length", {1});
    const NodeId node = t.Node("GroupQueryAttention", "com.microsoft", "gqa",
                               {query, key, value, past_key, past_value, seqlens_k, total},
                               {t.Unshaped("attn_out"), present_key, present_value});
    t.graph.node(node).attributes = {IntAttribute("num_heads", 8), IntAttribute("kv_num_heads", 2)};
    return node;
  }
};

TEST_F(CaptureAfterInference, FlatteningAKvTensorIsIneligibleThroughTheDerivation) {
  const SymbolId past_seq = t.Declared("past_seq");
  const ValueId past = t.Input("past_key", {batch, 8, past_seq, 64});
  const ValueId flat = t.Unshaped("flat");
  const NodeId reshape =
      t.Op("Reshape", "flatten_cache", {past, t.Int64s("minus_one", {-1})}, {flat});
  const NodeId relu = t.Op("Relu", "relu", {flat}, {t.Unshaped("relu_out")});
  Infer();
  const Shape& flat_shape = *t.graph.value(flat).shape;
  ASSERT_EQ(flat_shape.size(), 1u);
  ASSERT_TRUE(flat_shape[0].is_symbolic());
  for (CaptureMode mode : {CaptureMode::kDenylist, CaptureMode::kFailSafe}) {
    const CapturePlan plan = Classify(mode);
    EXPECT_FALSE(plan.IsEligible(reshape)) << CaptureModeName(mode);
    EXPECT_FALSE(plan.IsEligible(relu)) << CaptureModeName(mode);
    EXPECT_FALSE(plan.Disqualifies(batch)) << CaptureModeName(mode);
  }
  const CaptureReport report = ExplainCapture(t.graph, Classify(CaptureMode::kDenylist));
  const auto& edges = report.ineligible.back().edges;
  ASSERT_FALSE(edges.empty());
  EXPECT_EQ(report.ineligible.back().node, "node 'relu' (Relu)");
  EXPECT_EQ(edges[0].path_text, "past_seq -> " + t.graph.symbol(flat_shape[0].symbol()).name);
  EXPECT_EQ(edges[0].root_kind, "declared-past-input");
}

TEST_F(CaptureAfterInference, BroadcastIntoAStableLookingSymbolIsFollowed) {
  const SymbolId seq_kv = t.Declared("seq_kv");
  const SymbolId rows = t.Declared("rows");
  const ValueId past = t.Input("past_key", {1, 8, seq_kv, 64});
  const ValueId x = t.Input("x", {1, 8, rows, 64});
  const ValueId sum = t.Unshaped("sum");
  t.Op("Add", "add", {past, x}, {sum});
  const NodeId relu = t.Op("Relu", "relu", {sum}, {t.Unshaped("relu_out")});
  Infer();
  const CapturePlan plan = Classify(CaptureMode::kDenylist);
  EXPECT_TRUE(plan.Disqualifies(rows));
  EXPECT_FALSE(plan.IsEligible(relu));
}

TEST_F(CaptureAfterInference, GrowingGqaDisqualifiesItsPresentButNotBatch) {
  const SymbolId past_seq = t.Declared("past_seq");
  const ValueId present_key = t.Unshaped("present_key");
  const NodeId gqa = Gqa(t.Input("past_key", {batch, 2, past_seq, 64}),
                         t.Input("past_value", {batch, 2, past_seq, 64}),
                         t.Input("seqlens_k", {batch}), present_key, t.Unshaped("present_value"));
  const NodeId reader = t.Op("Relu", "reader", {present_key}, {t.Unshaped("reader_out")});
  const NodeId on_batch =
      t.Op("Relu", "on_batch", {t.Input("h", {batch, 512})}, {t.Unshaped("h_out")});
  Infer();
  for (bool fixed : {false, true}) {
    const CapturePlan plan = Classify(CaptureMode::kFailSafe, fixed);
    EXPECT_FALSE(plan.IsEligible(gqa)) << "fixed capacity " << fixed;
    EXPECT_FALSE(plan.IsEligible(reader)) << "fixed capacity " << fixed;
    EXPECT_TRUE(plan.IsEligible(on_batch)) << "fixed capacity " << fixed;
  }
}

TEST_F(CaptureAfterInference, CapacityGqaIsPinnedWhenBoundAtFixedCapacity) {
  const SymbolId max_len = t.Declared("max_len");
  const ValueId present_key = t.Output("present_key", {batch, 2, max_len, 64});
  const ValueId present_value = t.Output("present_value", {batch, 2, max_len, 64});
  const NodeId gqa = Gqa(t.Input("past_key", {batch, 2, max_len, 64}),
                         t.Input("past_value", {batch, 2, max_len, 64}),
                         t.Input("seqlens_k", {batch}), present_key, present_value);
  Infer();
  ASSERT_EQ((*t.graph.value(present_key).shape)[2], Dim::Symbolic(max_len));
  EXPECT_FALSE(Classify(CaptureMode::kFailSafe).IsEligible(gqa));
  const CapturePlan fixed = Classify(CaptureMode::kFailSafe, true);
  EXPECT_TRUE(fixed.IsEligible(gqa));
  EXPECT_FALSE(fixed.Disqualifies(max_len));
}

TEST_F(CaptureAfterInference, NonZeroCountDependsOnTheMode) {
  const ValueId x = t.Input("x", {batch, 16});
  const ValueId indices = t.Unshaped("indices");
  const NodeId nonzero = t.Op("NonZero", "nonzero", {x}, {indices});
  const NodeId cast = t.Op("Cast", "cast", {indices}, {t.Unshaped("cast_out")});
  t.graph.node(cast).attributes = {IntAttribute("to", 1)};
  Infer();
  const CapturePlan fail_safe = Classify(CaptureMode::kFailSafe);
  EXPECT_FALSE(fail_safe.IsEligible(nonzero));
  EXPECT_FALSE(fail_safe.IsEligible(cast));
  const CaptureReport report = ExplainCapture(t.graph, fail_safe);
  ASSERT_FALSE(report.ineligible.empty());
  EXPECT_EQ(report.ineligible[0].edges.at(0).root_kind, "minted-without-provenance");
  const CapturePlan denylist = Classify(CaptureMode::kDenylist);
  EXPECT_TRUE(denylist.IsEligible(nonzero));
  EXPECT_TRUE(denylist.IsEligible(cast));
}

TEST_F(CaptureAfterInference, FlatteningStableAxesStaysEligibleInFailSafe) {
  t.Input("past_key", {batch, 8, seq, 64});
  const SymbolId heads = t.Declared("heads");
  const ValueId x = t.Input("x", {batch, heads, 64});
  const ValueId flat = t.Unshaped("flat");
  const NodeId flatten = t.Op("Flatten", "flatten", {x}, {flat});
  t.graph.node(flatten).attributes = {IntAttribute("axis", 2)};
  const NodeId relu = t.Op("Relu", "relu", {flat}, {t.Unshaped("relu_out")});
  Infer();
  const Shape& flat_shape = *t.graph.value(flat).shape;
  ASSERT_TRUE(flat_shape[0].is_symbolic());
  ASSERT_GE(flat_shape[0].symbol().index, *t.graph.inference_symbol_floor);
  const CapturePlan plan = Classify(CaptureMode::kFailSafe);
  EXPECT_TRUE(plan.IsEligible(flatten));
  EXPECT_TRUE(plan.IsEligible(relu));
  EXPECT_THAT(FormatCaptureReport(ExplainCapture(t.graph, plan))[0],
              HasSubstr("2 of 2 nodes eligible"));
}

}  // namespace
}  // namespace nxrt::graph
