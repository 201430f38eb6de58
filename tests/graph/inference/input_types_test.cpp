// Input element types held to the op's ONNX schema before a node's shape is
// inferred: a type the input does not accept, inputs sharing a type
// parameter with different types, a homogeneous variadic input with mixed
// types, and the opset deciding what is accepted; and an output declared
// with another type than onnx's inference gives it.
#include <gtest/gtest.h>

#include <string>

#include "inference_test_graph.hpp"

namespace nxrt::graph {
namespace {

using testing::TestGraph;

std::string ErrorOf(TestGraph& t) {
  const Status status = t.Infer();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  return status.message();
}

TEST(InputTypes, AFixedTypeInputGivenAnotherIsAModelError) {
  TestGraph t;
  t.graph.opset_imports[""] = 11;
  t.Input("boxes", {1, 6, 4});
  t.Input("scores", {1, 1, 6});
  t.Input("max", {1}, DataType::kInt64);
  t.Input("iou", {1}, DataType::kFloat16);
  t.Op("NonMaxSuppression", {"boxes", "scores", "max", "iou"}, {"selected"});
  const std::string error = ErrorOf(t);
  EXPECT_NE(error.find("input 3 ('iou') is float16; the op takes float there at opset 11"),
            std::string::npos)
      << error;
}

TEST(InputTypes, InputsSharingATypeParameterMustAgree) {
  TestGraph t;
  t.graph.opset_imports[""] = 11;
  t.Input("start", {}, DataType::kInt32);
  t.Input("limit", {}, DataType::kInt64);
  t.Input("delta", {}, DataType::kInt32);
  t.Op("Range", {"start", "limit", "delta"}, {"y"});
  const std::string error = ErrorOf(t);
  EXPECT_NE(error.find("inputs 0 ('start') and 1 ('limit') must share one type but are int32 "
                       "and int64"),
            std::string::npos)
      << error;
}

// A node's output carries the dtype inference gave it, declared or not.
TEST(InputTypes, AnotherNodesOutputIsCheckedToo) {
  TestGraph t;
  t.graph.opset_imports[""] = 13;
  t.Input("x", {1, 2, 4, 4});
  t.Op("Shape", {"x"}, {"shape"});
  t.Op("ConvTranspose", {"x", "shape"}, {"y"});
  const std::string error = ErrorOf(t);
  EXPECT_NE(error.find("input 1 ('shape') is int64; the op takes float, float16, double there"),
            std::string::npos)
      << error;
}

TEST(InputTypes, AHomogeneousVariadicInputMustAgree) {
  TestGraph t;
  t.Input("a", {2});
  t.Input("b", {2});
  t.Input("c", {2}, DataType::kFloat64);
  t.Op("Max", {"a", "b", "c"}, {"y"});
  const std::string error = ErrorOf(t);
  EXPECT_NE(error.find("inputs 0 ('a') and 2 ('c')"), std::string::npos) << error;
}

// ReduceMax took bool from opset 20 on.
TEST(InputTypes, TheOpsetDecidesWhatIsAccepted) {
  for (const auto& [opset, accepted] : {std::pair{18, false}, std::pair{20, true}}) {
    TestGraph t;
    t.graph.opset_imports[""] = opset;
    t.Input("x", {3, 4}, DataType::kBool);
    t.Op("ReduceMax", {"x"}, {"y"});
    const Status status = t.Infer();
    EXPECT_EQ(status.ok(), accepted) << "opset " << opset << ": " << status.ToString();
    if (!accepted) {
      EXPECT_NE(status.message().find("input 0 ('x') is bool"), std::string::npos);
    }
  }
}

// Contrib ops are the EP's to judge.
TEST(InputTypes, OpsOnnxDoesNotDefineAreNotChecked) {
  TestGraph t;
  t.graph.opset_imports["com.microsoft"] = 1;
  t.Input("x", {2, 4}, DataType::kInt8);
  t.Op("FastGelu", {"x"}, {"y"}, {}, "com.microsoft");
  EXPECT_NE(t.Infer().code(), StatusCode::kInvalidArgument);
}

// RandomUniformLike has no rule of nxrt's own: onnx's inference gives its
// output the input's type, which a declaration may not contradict, since
// kernels write what the op gives into buffers sized by the declaration.
TEST(InputTypes, AnOutputDeclaredWithAnotherTypeThanTheOpGivesIsAModelError) {
  TestGraph t;
  t.graph.opset_imports[""] = 21;
  t.Input("x", {6}, DataType::kFloat16);
  t.Op("RandomUniformLike", {"x"}, {"y"});
  Value& y = t.graph.value(*t.graph.FindValue("y"));
  y.kind = ValueKind::kTensor;
  y.dtype = DataType::kBool;
  const std::string error = ErrorOf(t);
  EXPECT_NE(error.find("(RandomUniformLike): output 'y' is declared bool but the op gives "
                       "float16; declare the type the op gives"),
            std::string::npos)
      << error;

  y.dtype = DataType::kFloat16;
  EXPECT_TRUE(t.Infer().ok());
}

// Cast's own rule gives its output the type `to` names; a declaration of
// another type is refused the same way.
TEST(InputTypes, AnOutputDeclaredAgainstANativeRuleIsAModelError) {
  TestGraph t;
  t.Input("x", {3}, DataType::kFloat32);
  t.Op("Cast", {"x"}, {"y"}, {testing::IntAttr("to", 7)});  // 7: int64
  Value& y = t.graph.value(*t.graph.FindValue("y"));
  y.dtype = DataType::kFloat32;
  const std::string error = ErrorOf(t);
  EXPECT_NE(error.find("(Cast): output 'y' is declared float but the op gives int64; declare the "
                       "type the op gives"),
            std::string::npos)
      << error;

  y.dtype = DataType::kInt64;
  EXPECT_TRUE(t.Infer().ok());
}

}  // namespace
}  // namespace nxrt::graph
