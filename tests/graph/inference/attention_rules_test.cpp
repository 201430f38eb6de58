// Output shapes of the attention ops whose KV axes the capture classifier
// tracks: GroupQueryAttention, IndexShare, Attention (3-D and 4-D) and
// CompressedSparseAttention.
#include <gtest/gtest.h>

#include "inference_test_graph.hpp"

namespace nxrt::graph {
namespace {

using testing::IntAttr;
using testing::TestGraph;

// [B, S, hidden] query with separate key/value and a growing past.
TestGraph GqaGraph(const std::string& domain, const std::string& op) {
  TestGraph t;
  t.graph.opset_imports[domain] = 1;
  t.Input("query", {"batch", "seq", 512});
  t.Input("key", {"batch", "seq", 128});
  t.Input("value", {"batch", "seq", 128});
  t.Input("past_key", {"batch", 2, "past_seq", 64});
  t.Input("past_value", {"batch", 2, "past_seq", 64});
  t.Input("seqlens_k", {"batch"}, DataType::kInt32);
  t.Input("total_sequence_length", {}, DataType::kInt32);
  t.Op(op,
       {"query", "key", "value", "past_key", "past_value", "seqlens_k", "total_sequence_length"},
       {"output", "present_key", "present_value"},
       {IntAttr("num_heads", 8), IntAttr("kv_num_heads", 2)}, domain);
  return t;
}

void ExpectGrowingPresent(TestGraph& t) {
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("output"), (Shape{t.Sym("batch"), t.Sym("seq"), Dim::Static(512)}));
  const Shape& present = t.ShapeOf("present_key");
  ASSERT_EQ(present.size(), 4u);
  EXPECT_EQ(present[0], t.Sym("batch"));
  EXPECT_EQ(present[1], Dim::Static(2));
  EXPECT_EQ(present[3], Dim::Static(64));
  ASSERT_TRUE(present[2].is_symbolic());
  const Symbol& total = t.graph.symbol(present[2].symbol());
  EXPECT_EQ(total.origin, SymbolOrigin::kDerived);
  EXPECT_EQ(total.expr.op, SymbolExpr::Op::kAdd);
  const auto& d = t.graph.lineage.derivations;
  const SymbolId past = t.graph.DeclareSymbol("past_seq");
  EXPECT_NE(std::find(d.begin(), d.end(), std::make_pair(present[2].symbol(), past)), d.end());
  EXPECT_EQ(t.ShapeOf("present_value"), present);
  EXPECT_EQ(t.V("present_key").dtype, DataType::kFloat32);
}

TEST(AttentionRules, GroupQueryAttentionPresentIsPastPlusNew) {
  TestGraph t = GqaGraph("com.microsoft", "GroupQueryAttention");
  ExpectGrowingPresent(t);
}

TEST(AttentionRules, IndexShareFollowsTheGqaLayout) {
  TestGraph t = GqaGraph("pkg.nxrt", "IndexShare");
  ExpectGrowingPresent(t);
}

TEST(AttentionRules, GqaSharedBufferKeepsThePastSymbol) {
  TestGraph t = GqaGraph("com.microsoft", "GroupQueryAttention");
  Value& present = t.graph.value(*t.graph.FindValue("present_key"));
  present.shape = t.MakeShape({"batch", 2, "past_seq", 64});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("present_key")[2], t.Sym("past_seq"));
}

TEST(AttentionRules, GqaFixedCapacityPastIsSharedWithPresent) {
  TestGraph t;
  t.graph.opset_imports["com.microsoft"] = 1;
  t.Input("query", {"batch", "seq", 512});
  t.Input("key", {"batch", "seq", 128});
  t.Input("value", {"batch", "seq", 128});
  t.Input("past_key", {"batch", 2, 4096, 64}, DataType::kFloat16);
  t.Input("past_value", {"batch", 2, 4096, 64}, DataType::kFloat16);
  t.Op("GroupQueryAttention", {"query", "key", "value", "past_key", "past_value"},
       {"output", "present_key", "present_value"},
       {IntAttr("num_heads", 8), IntAttr("kv_num_heads", 2)}, "com.microsoft");
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("present_key"),
            (Shape{t.Sym("batch"), Dim::Static(2), Dim::Static(4096), Dim::Static(64)}));
  EXPECT_EQ(t.V("present_key").dtype, DataType::kFloat16);
  EXPECT_EQ(t.V("output").dtype, DataType::kFloat32);
}

TEST(AttentionRules, GqaPackedQkvDerivesTheHeadSize) {
  TestGraph t;
  t.graph.opset_imports["com.microsoft"] = 1;
  t.Input("qkv", {"batch", "seq", 768});
  t.Op("GroupQueryAttention", {"qkv", "", ""}, {"output", "present_key", "present_value"},
       {IntAttr("num_heads", 8), IntAttr("kv_num_heads", 2)}, "com.microsoft");
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("output"), (Shape{t.Sym("batch"), t.Sym("seq"), Dim::Static(512)}));
  EXPECT_EQ(t.ShapeOf("present_key"),
            (Shape{t.Sym("batch"), Dim::Static(2), t.Sym("seq"), Dim::Static(64)}));
}

TEST(AttentionRules, Attention4dWithPast) {
  TestGraph t;
  t.Input("Q", {"batch", 8, "q_seq", 64});
  t.Input("K", {"batch", 2, "kv_seq", 64});
  t.Input("V", {"batch", 2, "kv_seq", 32});
  t.Input("past_key", {"batch", 2, "past_seq", 64});
  t.Input("past_value", {"batch", 2, "past_seq", 32});
  t.Op("Attention", {"Q", "K", "V", "", "past_key", "past_value"},
       {"Y", "present_key", "present_value", "qk"});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("Y"),
            (Shape{t.Sym("batch"), Dim::Static(8), t.Sym("q_seq"), Dim::Static(32)}));
  const Dim total = t.ShapeOf("present_key")[2];
  ASSERT_TRUE(total.is_symbolic());
  const SymbolExpr& e = t.graph.symbol(total.symbol()).expr;
  EXPECT_EQ(e.op, SymbolExpr::Op::kAdd);
  EXPECT_EQ(e.operands.size(), 2u);
  EXPECT_EQ(t.ShapeOf("present_value"),
            (Shape{t.Sym("batch"), Dim::Static(2), total, Dim::Static(32)}));
  EXPECT_EQ(t.ShapeOf("qk"), (Shape{t.Sym("batch"), Dim::Static(8), t.Sym("q_seq"), total}));
}

TEST(AttentionRules, Attention3dWithoutPast) {
  TestGraph t;
  t.Input("Q", {"batch", "q_seq", 512});
  t.Input("K", {"batch", "kv_seq", 128});
  t.Input("V", {"batch", "kv_seq", 128});
  t.Op("Attention", {"Q", "K", "V"}, {"Y", "present_key", "present_value"},
       {IntAttr("q_num_heads", 8), IntAttr("kv_num_heads", 2)});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("Y"), (Shape{t.Sym("batch"), t.Sym("q_seq"), Dim::Static(512)}));
  EXPECT_EQ(t.ShapeOf("present_key"),
            (Shape{t.Sym("batch"), Dim::Static(2), t.Sym("kv_seq"), Dim::Static(64)}));
}

TestGraph CsaGraph(int64_t ratio, bool constant_total) {
  TestGraph t;
  t.graph.opset_imports["pkg.nxrt"] = 1;
  t.Input("query", {"batch", "seq", 512});
  t.Input("key", {"batch", "seq", 96});
  t.Input("value", {"batch", "seq", 80});
  if (constant_total) {
    t.Scalar("total", 4096);
  } else {
    t.Input("total", {}, DataType::kInt64);
  }
  t.Op("CompressedSparseAttention", {"query", "key", "value", "", "", "", "total"},
       {"out", "k_records", "unused2", "v_records", "unused4", "selected"},
       {IntAttr("ratio", ratio), IntAttr("index_heads", 4), IntAttr("selections", 16)}, "pkg.nxrt");
  return t;
}

TEST(AttentionRules, CompressedSparseAttentionRecordsFromConstantTotal) {
  TestGraph t = CsaGraph(2, true);
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("out"), (Shape{t.Sym("batch"), t.Sym("seq"), Dim::Static(512)}));
  EXPECT_EQ(t.ShapeOf("k_records"), (Shape{t.Sym("batch"), Dim::Static(2048), Dim::Static(96)}));
  EXPECT_EQ(t.ShapeOf("v_records"), (Shape{t.Sym("batch"), Dim::Static(2048), Dim::Static(80)}));
  EXPECT_EQ(t.ShapeOf("selected"),
            (Shape{t.Sym("batch"), Dim::Static(4), t.Sym("seq"), Dim::Static(16)}));
}

TEST(AttentionRules, CompressedSparseAttentionRatioFourMintsGrowingSelections) {
  TestGraph t = CsaGraph(4, false);
  const uint32_t floor = static_cast<uint32_t>(t.graph.symbols.size());
  ASSERT_TRUE(t.Infer().ok());
  const Shape& records = t.ShapeOf("k_records");
  ASSERT_TRUE(records[1].is_symbolic());
  EXPECT_EQ(t.graph.symbol(records[1].symbol()).origin, SymbolOrigin::kMinted);
  const Shape& selected = t.ShapeOf("selected");
  ASSERT_EQ(selected.size(), 4u);
  ASSERT_TRUE(selected[3].is_symbolic());
  EXPECT_EQ(t.graph.symbol(selected[3].symbol()).origin, SymbolOrigin::kMinted);
  EXPECT_GE(selected[3].symbol().index, floor);
  EXPECT_NE(selected[3], records[1]);
}

}  // namespace
}  // namespace nxrt::graph
