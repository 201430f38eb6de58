// The two lineage chokepoints seen through whole-graph inference: broadcasts
// record unifications, Reshape/Flatten record derivations, overflow gives an
// opaque symbol, data-dependent ops mint symbols above the floor.
#include <algorithm>

#include <gtest/gtest.h>

#include "inference_test_graph.hpp"

namespace nxrt::graph {
namespace {

using testing::IntAttr;
using testing::TestGraph;

bool HasPair(const std::vector<std::pair<SymbolId, SymbolId>>& pairs, SymbolId a, SymbolId b) {
  return std::find(pairs.begin(), pairs.end(), std::make_pair(a, b)) != pairs.end();
}

TEST(LineageChokepoints, BroadcastOfTwoSymbolsRecordsOneUnification) {
  TestGraph t;
  t.Input("kv", {"seq_kv", 64});
  t.Input("q", {"batch", 64});
  t.Op("Add", {"kv", "q"}, {"sum"});
  t.Op("Mul", {"sum", "q"}, {"product"});
  ASSERT_TRUE(t.Infer().ok());
  const SymbolId seq_kv = t.graph.DeclareSymbol("seq_kv");
  const SymbolId batch = t.graph.DeclareSymbol("batch");
  const SymbolId keep = std::min(seq_kv, batch), other = std::max(seq_kv, batch);
  ASSERT_EQ(t.graph.lineage.unifications.size(), 1u);
  EXPECT_EQ(t.graph.lineage.unifications[0], std::make_pair(keep, other));
  EXPECT_EQ(t.ShapeOf("sum"), (Shape{Dim::Symbolic(keep), Dim::Static(64)}));
}

TEST(LineageChokepoints, StaticOneYieldsTheSymbolAndStaticNWinsWithoutRecord) {
  TestGraph t;
  t.Input("a", {"seq", 1, 5});
  t.Input("b", {1, 7, "seq2"});
  t.Op("Add", {"a", "b"}, {"c"});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("c"), (Shape{t.Sym("seq"), Dim::Static(7), Dim::Static(5)}));
  EXPECT_TRUE(t.graph.lineage.unifications.empty());
}

TEST(LineageChokepoints, IncompatibleStaticBroadcastIsAModelError) {
  TestGraph t;
  t.Input("a", {2, 3});
  t.Input("b", {4, 3});
  t.Op("Add", {"a", "b"}, {"c"});
  Status s = t.Infer();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("Add"), std::string::npos);
  EXPECT_NE(s.message().find("[2,3]"), std::string::npos);
}

TEST(LineageChokepoints, ReshapeMinusOneLowersToDerivedProduct) {
  TestGraph t;
  t.Input("x", {"seq_kv", 8});
  t.Int64s("flat", {-1});
  t.Op("Reshape", {"x", "flat"}, {"y"});
  ASSERT_TRUE(t.Infer().ok());
  const SymbolId seq_kv = t.graph.DeclareSymbol("seq_kv");
  const Shape& y = t.ShapeOf("y");
  ASSERT_EQ(y.size(), 1u);
  ASSERT_TRUE(y[0].is_symbolic());
  const Symbol& derived = t.graph.symbol(y[0].symbol());
  EXPECT_EQ(derived.origin, SymbolOrigin::kDerived);
  EXPECT_EQ(derived.expr.op, SymbolExpr::Op::kMul);
  EXPECT_EQ(derived.expr.operands,
            (std::vector<SymbolOperand>{SymbolOperand::Of(seq_kv), SymbolOperand::Constant(8)}));
  EXPECT_TRUE(HasPair(t.graph.lineage.derivations, y[0].symbol(), seq_kv));
  EXPECT_GE(y[0].symbol().index, *t.graph.inference_symbol_floor);
}

TEST(LineageChokepoints, FlattenOfTwoSymbolsRecordsBothDerivations) {
  TestGraph t;
  t.Input("x", {"batch", "seq_kv", 4});
  t.Op("Flatten", {"x"}, {"y"}, {IntAttr("axis", 2)});
  ASSERT_TRUE(t.Infer().ok());
  const Shape& y = t.ShapeOf("y");
  ASSERT_EQ(y.size(), 2u);
  EXPECT_EQ(y[1], Dim::Static(4));
  ASSERT_TRUE(y[0].is_symbolic());
  EXPECT_TRUE(HasPair(t.graph.lineage.derivations, y[0].symbol(), t.graph.DeclareSymbol("batch")));
  EXPECT_TRUE(HasPair(t.graph.lineage.derivations, y[0].symbol(), t.graph.DeclareSymbol("seq_kv")));
}

TEST(LineageChokepoints, IdenticalExpressionsShareOneSymbol) {
  TestGraph t;
  t.Input("x", {"batch", "seq"});
  t.Input("z", {"batch", "seq"});
  t.Int64s("flat", {-1});
  t.Op("Reshape", {"x", "flat"}, {"a"});
  t.Op("Reshape", {"z", "flat"}, {"b"});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("a"), t.ShapeOf("b"));
  EXPECT_EQ(t.graph.lineage.derivations.size(), 2u);
}

TEST(LineageChokepoints, ReshapeBackDividesDerivedProducts) {
  TestGraph t;
  t.Input("x", {"batch", "seq", 512});
  t.Int64s("to2d", {-1, 512});
  t.Op("Reshape", {"x", "to2d"}, {"flat"});
  t.Op("Shape", {"x"}, {"shape"});
  t.Int64s("zero", {0});
  t.Op("Gather", {"shape", "zero"}, {"batch_dim"});
  t.Int64s("tail", {-1, 8, 64});
  t.Op("Concat", {"batch_dim", "tail"}, {"target"}, {IntAttr("axis", 0)});
  t.Op("Reshape", {"flat", "target"}, {"y"});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("y"), (Shape{t.Sym("batch"), t.Sym("seq"), Dim::Static(8), Dim::Static(64)}));
}

TEST(LineageChokepoints, ReshapeWithImpossibleStaticSizesIsAModelError) {
  TestGraph t;
  t.Input("x", {3, 5});
  t.Int64s("target", {4, -1});
  t.Op("Reshape", {"x", "target"}, {"y"});
  Status s = t.Infer();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("Reshape"), std::string::npos);
}

TEST(LineageChokepoints, OverflowGivesAnOpaqueSymbol) {
  TestGraph t;
  t.Input("x", {INT64_MAX / 2, 4});
  t.Int64s("flat", {-1});
  t.Op("Reshape", {"x", "flat"}, {"y"});
  ASSERT_TRUE(t.Infer().ok());
  const Shape& y = t.ShapeOf("y");
  ASSERT_EQ(y.size(), 1u);
  ASSERT_TRUE(y[0].is_symbolic());
  EXPECT_EQ(t.graph.symbol(y[0].symbol()).origin, SymbolOrigin::kOpaque);
  ASSERT_EQ(t.graph.lineage.opaque.size(), 1u);
  EXPECT_EQ(t.graph.lineage.opaque[0], y[0].symbol());
}

TEST(LineageChokepoints, NegativeExtentGivesAnOpaqueSymbol) {
  TestGraph t;
  t.Input("x", {2, 3});
  t.Int64s("pads", {0, -5, 0, 0});
  t.Op("Pad", {"x", "pads"}, {"y"});
  ASSERT_TRUE(t.Infer().ok());
  const Shape& y = t.ShapeOf("y");
  ASSERT_TRUE(y[1].is_symbolic());
  EXPECT_EQ(t.graph.symbol(y[1].symbol()).origin, SymbolOrigin::kOpaque);
}

TEST(LineageChokepoints, NonZeroMintsASymbolWithNoProvenanceAtOrAboveTheFloor) {
  TestGraph t;
  t.Input("x", {"batch", 4});
  const size_t declared = t.graph.symbols.size();
  t.Op("NonZero", {"x"}, {"idx"});
  ASSERT_TRUE(t.Infer().ok());
  const Shape& idx = t.ShapeOf("idx");
  ASSERT_EQ(idx.size(), 2u);
  EXPECT_EQ(idx[0], Dim::Static(2));
  ASSERT_TRUE(idx[1].is_symbolic());
  const SymbolId minted = idx[1].symbol();
  EXPECT_EQ(t.graph.symbol(minted).origin, SymbolOrigin::kMinted);
  ASSERT_TRUE(t.graph.inference_symbol_floor.has_value());
  EXPECT_EQ(*t.graph.inference_symbol_floor, declared);
  EXPECT_GE(minted.index, *t.graph.inference_symbol_floor);
  for (const auto& [derived, source] : t.graph.lineage.derivations) EXPECT_NE(derived, minted);
  EXPECT_EQ(t.V("idx").dtype, DataType::kInt64);
}

TEST(LineageChokepoints, FloorIsTheFirstMintedId) {
  TestGraph t;
  t.Input("x", {"a", "b"});
  t.Int64s("flat", {-1});
  t.Op("Reshape", {"x", "flat"}, {"y"});
  t.Op("NonZero", {"y"}, {"z"});
  const uint32_t before = static_cast<uint32_t>(t.graph.symbols.size());
  ASSERT_TRUE(t.Infer().ok());
  ASSERT_TRUE(t.graph.inference_symbol_floor.has_value());
  EXPECT_EQ(*t.graph.inference_symbol_floor, before);
  const SymbolId first_made = t.ShapeOf("y")[0].symbol();
  EXPECT_EQ(first_made.index, *t.graph.inference_symbol_floor);
  for (uint32_t i = 0; i < before; ++i) {
    EXPECT_EQ(t.graph.symbols[i].origin, SymbolOrigin::kDeclared);
  }
}

}  // namespace
}  // namespace nxrt::graph
