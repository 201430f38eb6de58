// Shapes whose element count overflows int64, worked out at load from
// constant shape inputs, are model errors naming the model, node and op:
// no buffer could hold them, and every size computed from them would wrap.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>

#include "inference_test_graph.hpp"

namespace nxrt::graph {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::TestGraph;

constexpr int64_t kTwoToThe62 = int64_t{1} << 62;

MATCHER(OneLine, "is a single line") {
  return arg.find('\n') == std::string::npos;
}

TestGraph Model() {
  TestGraph t;
  t.graph.model_path = "overflow.onnx";
  return t;
}

std::string ErrorOf(TestGraph& t) {
  const Status status = t.Infer();
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  return status.message();
}

TEST(ShapeOverflow, ExpandToACountPastInt64IsAModelError) {
  TestGraph t = Model();
  t.Input("x", {1, 1});
  t.Int64s("shape", {kTwoToThe62, 4});
  t.Op("Expand", {"x", "shape"}, {"y"});
  EXPECT_THAT(ErrorOf(t),
              AllOf(HasSubstr("overflow.onnx: node 'Expand_0' (Expand)"), HasSubstr("output 'y'"),
                    HasSubstr("[4611686018427387904,4]"), HasSubstr("overflows int64"), OneLine()));
}

TEST(ShapeOverflow, ConstantOfShapePastInt64IsAModelError) {
  TestGraph t = Model();
  t.Int64s("shape", {kTwoToThe62, 4});
  t.Op("ConstantOfShape", {"shape"}, {"y"});
  EXPECT_THAT(ErrorOf(t), AllOf(HasSubstr("node 'ConstantOfShape_0' (ConstantOfShape)"),
                                HasSubstr("overflows int64"), OneLine()));
}

TEST(ShapeOverflow, ReshapeToACountPastInt64IsAModelError) {
  TestGraph t = Model();
  t.Input("x", {4});
  t.Int64s("shape", {kTwoToThe62, 4});
  t.Op("Reshape", {"x", "shape"}, {"y"});
  EXPECT_THAT(ErrorOf(t), AllOf(HasSubstr("node 'Reshape_0' (Reshape)"),
                                HasSubstr("overflows int64"), OneLine()));
}

TEST(ShapeOverflow, TileWhoseOutputCountPassesInt64IsAModelError) {
  TestGraph t = Model();
  t.Input("x", {kTwoToThe62, 1});
  t.Int64s("repeats", {1, 4});
  t.Op("Tile", {"x", "repeats"}, {"y"});
  EXPECT_THAT(ErrorOf(t),
              AllOf(HasSubstr("node 'Tile_0' (Tile)"), HasSubstr("overflows int64"), OneLine()));
}

TEST(ShapeOverflow, TileWhoseExtentPassesInt64IsAModelError) {
  TestGraph t = Model();
  t.Input("x", {kTwoToThe62});
  t.Int64s("repeats", {4});
  t.Op("Tile", {"x", "repeats"}, {"y"});
  EXPECT_THAT(ErrorOf(t), AllOf(HasSubstr("node 'Tile_0' (Tile)"),
                                HasSubstr("repeating extent 4611686018427387904 4 times"),
                                HasSubstr("fix the repeats"), OneLine()));
}

// The limit is int64's own: a count of exactly INT64_MAX (7 x 1317624576693539401)
// infers, one of 2^63 does not, and an empty axis empties any product.
TEST(ShapeOverflow, TheLimitIsInt64MaxAndEmptyShapesInfer) {
  constexpr int64_t kSeventhOfMax = INT64_MAX / 7;
  static_assert(kSeventhOfMax * 7 == INT64_MAX);
  TestGraph t = Model();
  t.Int64s("largest", {kSeventhOfMax, 7});
  t.Int64s("empty", {kTwoToThe62, 4, 0});
  t.Op("ConstantOfShape", {"largest"}, {"y"});
  t.Op("ConstantOfShape", {"empty"}, {"z"});
  const Status status = t.Infer();
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(t.ShapeOf("y"), (Shape{Dim::Static(kSeventhOfMax), Dim::Static(7)}));
  EXPECT_EQ(t.ShapeOf("z"), (Shape{Dim::Static(kTwoToThe62), Dim::Static(4), Dim::Static(0)}));

  TestGraph past = Model();
  past.Int64s("shape", {kTwoToThe62, 2});
  past.Op("ConstantOfShape", {"shape"}, {"y"});
  EXPECT_THAT(ErrorOf(past), HasSubstr("[4611686018427387904,2], whose element count overflows"));
}

}  // namespace
}  // namespace nxrt::graph
