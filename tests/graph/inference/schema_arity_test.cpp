// Ops inferred through libonnx's schemas (those without an nxrt rule) have
// their inputs and outputs counted against the schema first: libonnx's
// inference functions read what the schema requires without checking it is
// there. The schema may be older than the node's opset, so a mismatch leaves
// the outputs' shapes unknown, with the reason, instead of failing the model
// or reaching libonnx.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "inference_test_graph.hpp"

namespace nxrt::graph {
namespace {

using ::testing::HasSubstr;
using testing::TestGraph;

TestGraph MlModel() {
  TestGraph t;
  t.graph.model_path = "arity.onnx";
  t.graph.opset_imports["ai.onnx.ml"] = 2;
  return t;
}

// Infers `t` asking for every shape, so the skipped node's reason comes back.
std::string ReasonLeftUnknown(TestGraph& t) {
  ShapeInferenceOptions options;
  options.fail_on_unknown_shape = true;
  const Status status = InferShapes(t.graph, options);
  EXPECT_FALSE(status.ok());
  return status.message();
}

TEST(SchemaArity, FewerInputsThanTheSchemaTakesSkipsLibonnx) {
  TestGraph t = MlModel();
  t.Op("LabelEncoder", {}, {"y"}, {}, "ai.onnx.ml");
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_FALSE(t.V("y").shape.has_value());
  EXPECT_THAT(ReasonLeftUnknown(t), HasSubstr("has 0 inputs where libonnx's schema (since opset "));
}

TEST(SchemaArity, MoreOutputsThanTheSchemaMakesSkipsLibonnx) {
  TestGraph t = MlModel();
  t.Input("x", {3}, DataType::kInt64);
  t.Op("LabelEncoder", {"x"}, {"y", "z"}, {}, "ai.onnx.ml");
  EXPECT_THAT(ReasonLeftUnknown(t), HasSubstr("has 2 outputs where libonnx's schema"));
}

TEST(SchemaArity, AnAbsentRequiredInputSkipsLibonnx) {
  TestGraph t = MlModel();
  t.Op("LabelEncoder", {""}, {"y"}, {}, "ai.onnx.ml");
  EXPECT_THAT(ReasonLeftUnknown(t), HasSubstr("input 0 ('X') is absent where libonnx's schema"));
}

}  // namespace
}  // namespace nxrt::graph
