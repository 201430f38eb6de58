#include "nxrt/graph/capture_explain.hpp"

#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "capture_test_graph.hpp"

namespace nxrt::graph {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using testing::TestGraph;

class CaptureExplainTest : public ::testing::Test {
 protected:
  TestGraph t;
  SymbolId batch = t.Declared("batch");
  SymbolId seq_kv = t.Declared("seq_kv");

  CaptureReport Explain(CaptureMode mode = CaptureMode::kDenylist) {
    CaptureOptions options;
    options.mode = mode;
    return ExplainCapture(t.graph, ClassifyCapture(t.graph, options));
  }
  static const NodeCaptureReport* Find(const CaptureReport& report, const std::string& op) {
    for (const auto& node : report.ineligible) {
      if (node.op_type == op) return &node;
    }
    return nullptr;
  }
};

TEST_F(CaptureExplainTest, NamesTheDerivationPathFromTheKvSlot) {
  const auto gqa = t.Gqa("layer0.attn", batch, seq_kv, seq_kv, true);
  t.StartInference();
  const SymbolId flat = t.Derived("seq_kv*8", {seq_kv});
  const ValueId flattened = t.Value("flat_cache", {flat});
  t.Op("Reshape", "flatten", {gqa.present_key, t.Value("shape", {1})}, {flattened});
  t.Op("Relu", "relu", {flattened}, {t.Value("y", {flat})});

  const CaptureReport report = Explain();
  const NodeCaptureReport* relu = Find(report, "Relu");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->node, "node 'relu' (Relu)");
  EXPECT_EQ(relu->verdict, "disqualifying-symbol");
  ASSERT_THAT(relu->edges, SizeIs(2));
  const DisqualifiedEdgeReport& edge = relu->edges[0];
  EXPECT_EQ(edge.side, "input");
  EXPECT_EQ(edge.slot, 0u);
  EXPECT_EQ(edge.value, "flat_cache");
  EXPECT_EQ(edge.axis, 0u);
  EXPECT_EQ(edge.symbol, "seq_kv*8");
  EXPECT_EQ(edge.path_text, "seq_kv -> seq_kv*8");
  ASSERT_THAT(edge.path, SizeIs(2));
  EXPECT_EQ(edge.path[0].symbol, "seq_kv");
  EXPECT_EQ(edge.path[0].link, "");
  EXPECT_EQ(edge.path[1].link, "derivation");
  EXPECT_EQ(edge.root_kind, "kv-slot-input");
  EXPECT_THAT(edge.root, HasSubstr("input 3 'layer0.attn.cache_k'"));
  EXPECT_THAT(edge.root, HasSubstr("node 'layer0.attn' (com.microsoft::GroupQueryAttention)"));
}

TEST_F(CaptureExplainTest, NamesUnificationsInThePath) {
  t.Input("past_key_values.0.key", {batch, 8, seq_kv, 64});
  const SymbolId rows = t.Declared("rows");
  t.Unify(seq_kv, rows);
  t.Op("Relu", "relu", {t.Input("x", {rows, 4})}, {t.Value("y", {rows, 4})});
  const CaptureReport report = Explain();
  const NodeCaptureReport* relu = Find(report, "Relu");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->edges[0].path_text, "seq_kv = rows");
  EXPECT_EQ(relu->edges[0].root_kind, "declared-past-input");
  EXPECT_THAT(relu->edges[0].root, HasSubstr("'past_key_values.0.key'"));
}

TEST_F(CaptureExplainTest, NamesEachRootKind) {
  const SymbolId opaque = t.Declared("overflowed");
  t.graph.lineage.opaque.push_back(opaque);
  t.Output("present.0.value", {batch, 8, seq_kv, 64});
  t.StartInference();
  const SymbolId count = t.Minted("nonzero_count");
  t.Op("Abs", "a", {t.Input("x", {opaque})}, {t.Value("y", {opaque})});
  t.Op("NonZero", "nz", {t.Input("z", {batch})}, {t.Value("idx", {1, count})});
  t.Op("Neg", "n", {t.Input("w", {seq_kv})}, {t.Value("v", {seq_kv})});
  const CaptureReport report = Explain(CaptureMode::kFailSafe);
  EXPECT_EQ(Find(report, "Abs")->edges[0].root_kind, "opaque");
  EXPECT_EQ(Find(report, "NonZero")->edges[0].root_kind, "minted-without-provenance");
  EXPECT_EQ(Find(report, "Neg")->edges[0].root_kind, "declared-present-output");
  EXPECT_THAT(Find(report, "Neg")->edges[0].root, HasSubstr("'present.0.value'"));
}

TEST_F(CaptureExplainTest, SparseAttentionSelectionsRootIsTheLastAxis) {
  const SymbolId selections = t.Declared("selections");
  const ValueId q = t.Value("q", {batch, 1, 512});
  t.Node("CompressedSparseAttention", "pkg.nxrt", "csa", {q},
         {q, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
          t.Value("sel", {batch, 4, 1, selections})});
  const CaptureReport report = Explain();
  const NodeCaptureReport* csa = Find(report, "CompressedSparseAttention");
  ASSERT_NE(csa, nullptr);
  EXPECT_EQ(csa->edges[0].root_kind, "kv-slot-last-axis");
  EXPECT_THAT(csa->edges[0].root, HasSubstr("output 5 'sel'"));
}

TEST_F(CaptureExplainTest, ANodeWithoutOutputsSaysSo) {
  t.Op("Print", "sink", {t.Input("x", {4})}, {});
  const CaptureReport report = Explain();
  ASSERT_THAT(report.ineligible, SizeIs(1));
  EXPECT_EQ(report.ineligible[0].verdict, "no-outputs");
  const auto lines = FormatCaptureReport(report);
  ASSERT_THAT(lines, SizeIs(2));
  EXPECT_EQ(lines[1], "node 'sink' (Print): eager, it has no outputs");
}

TEST_F(CaptureExplainTest, FormatsASummaryAndOneLinePerIneligibleNode) {
  t.Input("past_key", {batch, 8, seq_kv, 64});
  t.StartInference();
  const SymbolId flat = t.Derived("seq_kv*8", {seq_kv});
  t.Op("Relu", "ok", {t.Input("x", {batch})}, {t.Value("y", {batch})});
  t.Op("Relu", "flat", {t.Value("f", {flat})}, {t.Value("g", {flat})});
  const auto lines = FormatCaptureReport(Explain());
  EXPECT_THAT(lines,
              ElementsAre("capture classifier: mode denylist, 1 of 2 nodes eligible, "
                          "disqualifying [seq_kv, seq_kv*8], pinned []",
                          "node 'flat' (Relu): eager, input 0 'f' axis 0 carries 'seq_kv*8'; "
                          "lineage seq_kv -> seq_kv*8; root 'seq_kv': sequence axis of KV graph "
                          "input 'past_key' (and 1 more edge(s))"));
}

TEST_F(CaptureExplainTest, UnnamedSymbolsAndValuesAreNumbered) {
  const SymbolId unnamed = t.graph.AddSymbol(Symbol{"", SymbolOrigin::kDeclared, {}});
  EXPECT_EQ(SymbolName(t.graph, unnamed), "#" + std::to_string(unnamed.index));
  EXPECT_EQ(SymbolName(t.graph, SymbolId{999}), "#999");
  const std::vector<SymbolId> both = {batch, unnamed};
  EXPECT_EQ(JoinSymbolNames(t.graph, both), "batch, #" + std::to_string(unnamed.index));
}

TEST_F(CaptureExplainTest, LineagePathOfAnUnreachedSymbolIsEmpty) {
  t.Input("past_key", {batch, 8, seq_kv, 64});
  CaptureOptions options;
  options.mode = CaptureMode::kDenylist;
  const CapturePlan plan = ClassifyCapture(t.graph, options);
  EXPECT_EQ(FormatLineagePath(t.graph, plan.closure, seq_kv), "seq_kv");
  EXPECT_EQ(FormatLineagePath(t.graph, plan.closure, batch), "");
}

TEST_F(CaptureExplainTest, EligibleNodesAreNotListed) {
  t.Op("Relu", "ok", {t.Input("x", {batch})}, {t.Value("y", {batch})});
  const CaptureReport report = Explain();
  EXPECT_EQ(report.node_count, 1u);
  EXPECT_EQ(report.eligible_count, 1u);
  EXPECT_TRUE(report.ineligible.empty());
}

}  // namespace
}  // namespace nxrt::graph
