// Every broadcasting rule meets two symbols through the one chokepoint, so
// each records the pair as a unification.
#include <algorithm>

#include <gtest/gtest.h>

#include "inference_test_graph.hpp"

namespace nxrt::graph {
namespace {

using testing::IntAttr;
using testing::StringAttr;
using testing::TestGraph;

void ExpectUnified(TestGraph& t, const char* a, const char* b) {
  Status s = t.Infer();
  ASSERT_TRUE(s.ok()) << s.message();
  const SymbolId sa = t.graph.DeclareSymbol(a), sb = t.graph.DeclareSymbol(b);
  const auto pair = std::make_pair(std::min(sa, sb), std::max(sa, sb));
  const auto& u = t.graph.lineage.unifications;
  EXPECT_NE(std::find(u.begin(), u.end(), pair), u.end()) << a << " and " << b;
}

TEST(BroadcastRules, Where) {
  TestGraph t;
  t.Input("c", {"m", 1}, DataType::kBool);
  t.Input("x", {"n", 4});
  t.Input("y", {1, 4});
  t.Op("Where", {"c", "x", "y"}, {"z"});
  ExpectUnified(t, "m", "n");
}

TEST(BroadcastRules, ConcatOffAxis) {
  TestGraph t;
  t.Input("x", {"m", 4});
  t.Input("y", {"n", 2});
  t.Op("Concat", {"x", "y"}, {"z"}, {IntAttr("axis", 1)});
  ExpectUnified(t, "m", "n");
}

TEST(BroadcastRules, Expand) {
  TestGraph t;
  t.Input("x", {"m", 4});
  t.Input("like", {"n", 4});
  t.Op("Shape", {"like"}, {"shape"});
  t.Op("Expand", {"x", "shape"}, {"z"});
  ExpectUnified(t, "m", "n");
}

TEST(BroadcastRules, GemmC) {
  TestGraph t;
  t.Input("a", {"m", 8});
  t.Input("b", {8, 4});
  t.Input("c", {"n", 4});
  t.Op("Gemm", {"a", "b", "c"}, {"z"});
  ExpectUnified(t, "m", "n");
}

TEST(BroadcastRules, VariadicSum) {
  TestGraph t;
  t.Input("x", {"m"});
  t.Input("y", {1});
  t.Input("w", {"n"});
  t.Op("Sum", {"x", "y", "w"}, {"z"});
  ExpectUnified(t, "m", "n");
}

TEST(BroadcastRules, PRelu) {
  TestGraph t;
  t.Input("x", {"m", 4});
  t.Input("slope", {"n", 1});
  t.Op("PRelu", {"x", "slope"}, {"z"});
  ExpectUnified(t, "m", "n");
}

TEST(BroadcastRules, EinsumSharedLetter) {
  TestGraph t;
  t.Input("x", {"m", 4});
  t.Input("y", {"n", 4});
  t.Op("Einsum", {"x", "y"}, {"z"}, {StringAttr("equation", "ij,ij->i")});
  ExpectUnified(t, "m", "n");
}

TEST(BroadcastRules, ResizeByAWholeScaleDerivesTheProduct) {
  TestGraph t;
  t.Input("x", {"n", 3, "h", 8});
  std::vector<float> scales{1, 1, 2, 0.5f};
  std::vector<std::byte> bytes(scales.size() * sizeof(float));
  std::memcpy(bytes.data(), scales.data(), bytes.size());
  Value v;
  v.name = "scales";
  v.dtype = DataType::kFloat32;
  v.initializer = t.graph.weights->AddOwned(DataType::kFloat32, {4}, std::move(bytes));
  t.graph.AddValue(std::move(v));
  t.Op("Resize", {"x", "", "scales"}, {"y"});
  ASSERT_TRUE(t.Infer().ok());
  const Shape& y = t.ShapeOf("y");
  ASSERT_EQ(y.size(), 4u);
  EXPECT_EQ(y[0], t.Sym("n"));
  EXPECT_EQ(y[3], Dim::Static(4));
  ASSERT_TRUE(y[2].is_symbolic());
  const Symbol& doubled = t.graph.symbol(y[2].symbol());
  EXPECT_EQ(doubled.origin, SymbolOrigin::kDerived);
  EXPECT_EQ(doubled.expr.operands.back(), SymbolOperand::Constant(2));
}

}  // namespace
}  // namespace nxrt::graph
