// Shapes given at run time whose element count overflows int64 (Expand's and
// Reshape's shape, ConstantOfShape's, Tile's repeats, all graph inputs) are
// refused with one line naming the model, node and op, before a kernel sizes
// or walks anything by a wrapped count.
#include <gtest/gtest.h>

#include "tensor_node_session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;

constexpr int64_t kTwoToThe62 = int64_t{1} << 62;

// Runs `node` and checks its error names the model, node and op, says
// `fault`, and is one line.
void ExpectOverflowRefused(TensorNode node, const std::string& fault) {
  const std::string op = node.op;
  auto result = RunTensorNode(std::move(node));
  ASSERT_FALSE(result.ok()) << op << " ran a shape past int64";
  const std::string& message = result.status().message();
  for (const std::string& part : {op + ".onnx", "node 'node' (" + op + ")", fault}) {
    EXPECT_NE(message.find(part), std::string::npos) << "no '" << part << "' in: " << message;
  }
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(CpuEpShapeOverflow, ExpandToACountPastInt64IsRefused) {
  TensorNode node;
  node.op = "Expand";
  node.opset = 13;
  node.inputs = {{"x", Values<float>({1}, {1.0f})},
                 {"shape", Values<int64_t>({2}, {kTwoToThe62, 4})}};
  node.outputs = {DataType::kFloat32};
  ExpectOverflowRefused(node, "overflows int64");
}

TEST(CpuEpShapeOverflow, ReshapeOfAnEmptyTensorToACountPastInt64IsRefused) {
  // Wrapped, 2^62 x 4 elements would count 0 and pass for the input's 0.
  TensorNode node;
  node.op = "Reshape";
  node.opset = 14;
  node.inputs = {{"x", Values<float>({0}, {})}, {"shape", Values<int64_t>({2}, {kTwoToThe62, 4})}};
  node.outputs = {DataType::kFloat32};
  ExpectOverflowRefused(node, "[4611686018427387904,4] overflows int64");
}

TEST(CpuEpShapeOverflow, ReshapeInferringAnExtentBesideACountPastInt64IsRefused) {
  TensorNode node;
  node.op = "Reshape";
  node.opset = 14;
  node.inputs = {{"x", Values<float>({0}, {})},
                 {"shape", Values<int64_t>({3}, {kTwoToThe62, 4, -1})}};
  node.outputs = {DataType::kFloat32};
  ExpectOverflowRefused(node, "overflows int64");
}

TEST(CpuEpShapeOverflow, ConstantOfShapePastInt64IsRefused) {
  TensorNode node;
  node.op = "ConstantOfShape";
  node.opset = 20;
  node.inputs = {{"shape", Values<int64_t>({2}, {kTwoToThe62, 4})}};
  node.outputs = {DataType::kFloat32};
  ExpectOverflowRefused(node, "[4611686018427387904,4] overflows int64");
}

TEST(CpuEpShapeOverflow, TileRepeatingPastInt64IsRefused) {
  TensorNode node;
  node.op = "Tile";
  node.opset = 13;
  node.inputs = {{"x", Values<float>({2}, {1.0f, 2.0f})},
                 {"repeats", Values<int64_t>({1}, {kTwoToThe62})}};
  node.outputs = {DataType::kFloat32};
  ExpectOverflowRefused(node, "repeating extent 2 4611686018427387904 times overflows int64");
}

}  // namespace
}  // namespace nxrt_test
