// Shape computations on small int64 tensors keep static extents static and
// symbolic ones as the symbols they came from.
#include <gtest/gtest.h>

#include "inference_test_graph.hpp"

namespace nxrt::graph {
namespace {

using testing::IntAttr;
using testing::IntsAttr;
using testing::TestGraph;

TEST(ConstantPropagation, ShapeGatherConcatReshapeKeepsSymbolsAndStatics) {
  TestGraph t;
  t.Input("x", {"batch", "seq", 512});
  t.Op("Shape", {"x"}, {"shape"});
  t.Scalar("i0", 0);
  t.Scalar("i1", 1);
  t.Op("Gather", {"shape", "i0"}, {"b"}, {IntAttr("axis", 0)});
  t.Op("Gather", {"shape", "i1"}, {"s"}, {IntAttr("axis", 0)});
  t.Int64s("axes", {0});
  t.Op("Unsqueeze", {"b", "axes"}, {"b1"});
  t.Op("Unsqueeze", {"s", "axes"}, {"s1"});
  t.Int64s("heads", {8, 64});
  t.Op("Concat", {"b1", "s1", "heads"}, {"target"}, {IntAttr("axis", 0)});
  t.Op("Reshape", {"x", "target"}, {"y"});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("y"), (Shape{t.Sym("batch"), t.Sym("seq"), Dim::Static(8), Dim::Static(64)}));
  EXPECT_EQ(t.ShapeOf("target"), (Shape{Dim::Static(4)}));
  EXPECT_TRUE(t.graph.lineage.derivations.empty());
}

TEST(ConstantPropagation, ShapeSliceAndArithmetic) {
  TestGraph t;
  t.Input("x", {"batch", "seq", 8, 64});
  t.Op("Shape", {"x"}, {"shape"});
  t.Int64s("start", {2});
  t.Int64s("end", {4});
  t.Op("Slice", {"shape", "start", "end"}, {"tail"});
  t.Op("ReduceProd", {"tail"}, {"hidden"}, {IntAttr("keepdims", 1)});
  t.Int64s("lead_start", {0});
  t.Op("Slice", {"shape", "lead_start", "start"}, {"lead"});
  t.Op("Concat", {"lead", "hidden"}, {"target"}, {IntAttr("axis", 0)});
  t.Op("Reshape", {"x", "target"}, {"y"});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("y"), (Shape{t.Sym("batch"), t.Sym("seq"), Dim::Static(512)}));
}

TEST(ConstantPropagation, MulOfShapeElementsIsDerived) {
  TestGraph t;
  t.Input("x", {"batch", "seq", 16});
  t.Op("Shape", {"x"}, {"shape"});
  t.Scalar("i0", 0);
  t.Scalar("i1", 1);
  t.Op("Gather", {"shape", "i0"}, {"b"});
  t.Op("Gather", {"shape", "i1"}, {"s"});
  t.Op("Mul", {"b", "s"}, {"bs"});
  t.Int64s("axes", {0});
  t.Op("Unsqueeze", {"bs", "axes"}, {"bs1"});
  t.Int64s("last", {16});
  t.Op("Concat", {"bs1", "last"}, {"target"}, {IntAttr("axis", 0)});
  t.Op("Reshape", {"x", "target"}, {"y"});
  ASSERT_TRUE(t.Infer().ok());
  const Shape& y = t.ShapeOf("y");
  ASSERT_EQ(y.size(), 2u);
  ASSERT_TRUE(y[0].is_symbolic());
  const Symbol& product = t.graph.symbol(y[0].symbol());
  EXPECT_EQ(product.origin, SymbolOrigin::kDerived);
  EXPECT_EQ(product.expr.op, SymbolExpr::Op::kMul);
  EXPECT_EQ(y[1], Dim::Static(16));
}

TEST(ConstantPropagation, ConstantOfShapeCastEqualWhere) {
  TestGraph t;
  t.Input("x", {"batch", 3});
  t.Op("Shape", {"x"}, {"shape"});
  t.Op("ConstantOfShape", {"shape"}, {"zeros"});
  t.Int64s("minus_one", {-1, -1});
  t.Int64s("target", {-1, 3});
  t.Op("Equal", {"target", "minus_one"}, {"is_free"});
  t.Op("Where", {"is_free", "shape", "target"}, {"resolved"});
  t.Op("Expand", {"zeros", "resolved"}, {"y"});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("zeros"), (Shape{t.Sym("batch"), Dim::Static(3)}));
  EXPECT_EQ(t.V("zeros").dtype, DataType::kFloat32);
  EXPECT_EQ(t.ShapeOf("y"), (Shape{t.Sym("batch"), Dim::Static(3)}));
}

TEST(ConstantPropagation, NonConstantShapeInputMintsPerElement) {
  TestGraph t;
  t.Input("x", {6});
  t.Input("target", {2}, DataType::kInt64);
  t.Op("Reshape", {"x", "target"}, {"y"});
  ASSERT_TRUE(t.Infer().ok());
  const Shape& y = t.ShapeOf("y");
  ASSERT_EQ(y.size(), 2u);
  for (Dim d : y) {
    ASSERT_TRUE(d.is_symbolic());
    EXPECT_EQ(t.graph.symbol(d.symbol()).origin, SymbolOrigin::kMinted);
  }
  EXPECT_NE(y[0], y[1]);
}

// A shape input longer than the shapes nxrt tracks leaves the output's rank
// unknown at once; handed to onnx's inference it would become 2^31 dims.
TEST(ConstantPropagation, OverlongShapeInputLeavesTheRankUnknown) {
  TestGraph t;
  t.Input("shape", {int64_t{1} << 31}, DataType::kInt64);
  t.Op("ConstantOfShape", {"shape"}, {"y"});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_FALSE(t.V("y").shape.has_value());
}

TEST(ConstantPropagation, SqueezeUnsqueezeTransposeKeepSymbols) {
  TestGraph t;
  t.Input("x", {"batch", 1, "seq"});
  t.Int64s("one", {1});
  t.Op("Squeeze", {"x", "one"}, {"sq"});
  t.Op("Unsqueeze", {"sq", "one"}, {"un"});
  t.Op("Transpose", {"un"}, {"tr"}, {IntsAttr("perm", {2, 0, 1})});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.ShapeOf("sq"), (Shape{t.Sym("batch"), t.Sym("seq")}));
  EXPECT_EQ(t.ShapeOf("tr"), (Shape{t.Sym("seq"), t.Sym("batch"), Dim::Static(1)}));
}

}  // namespace
}  // namespace nxrt::graph
