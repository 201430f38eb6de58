// Values for which a plain C++ conversion is undefined behaviour get a
// defined answer: a floating result bound for an integer output saturates,
// coordinates and extents far past any tensor are folded or refused, and a
// bool input byte other than 0 or 1 is refused at binding, before a kernel
// loads it as bool.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "tensor_node_session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;

TEST(CpuEpUndefinedValues, IntegerPowPastItsTypeSaturatesAndNanGivesZero) {
  TensorNode node;
  node.op = "Pow";
  node.opset = 15;
  node.inputs = {{"x", Values<int32_t>({4}, {2, -2, 0, -2})},
                 {"y", Values<float>({4}, {100.0f, 101.0f, -1.0f, 0.5f})}};
  node.outputs = {DataType::kInt32};
  auto result = RunTensorNode(std::move(node));
  ASSERT_TRUE(result.ok()) << result.status().message();
  const auto y = (*result)[0].values<int32_t>();
  const std::vector<int32_t> expected = {std::numeric_limits<int32_t>::max(),
                                         std::numeric_limits<int32_t>::min(),
                                         std::numeric_limits<int32_t>::max(), 0};
  EXPECT_EQ(std::vector<int32_t>(y.begin(), y.end()), expected);
}

TEST(CpuEpUndefinedValues, ResizeToAnExtentPastInt64IsRefused) {
  TensorNode node;
  node.op = "Resize";
  node.opset = 13;
  node.inputs = {{"x", Values<float>({1, 1, 2, 2}, {1, 2, 3, 4})},
                 {"", nxrt::Tensor()},
                 {"scales", Values<float>({4}, {1.0f, 1.0f, 1e30f, 1e30f})}};
  node.outputs = {DataType::kFloat32};
  ExpectRefused(node, "overflows int64");
}

TEST(CpuEpUndefinedValues, CastOfFloatsPastAnIntegerTypeSaturates) {
  TensorNode node;
  node.op = "Cast";
  node.opset = 21;
  node.inputs = {{"x", Values<float>({4}, {7.6e19f, -1.0f, NAN, 3.7f})}};
  node.outputs = {DataType::kUint32};
  node.attributes = {IntAttribute("to", static_cast<int64_t>(DataType::kUint32))};
  auto result = RunTensorNode(std::move(node));
  ASSERT_TRUE(result.ok()) << result.status().message();
  const auto y = (*result)[0].values<uint32_t>();
  const std::vector<uint32_t> expected = {std::numeric_limits<uint32_t>::max(), 0, 0, 3};
  EXPECT_EQ(std::vector<uint32_t>(y.begin(), y.end()), expected);
}

TEST(CpuEpUndefinedValues, RangeOfMoreStepsThanInt64IsRefused) {
  TensorNode node;
  node.op = "Range";
  node.opset = 11;
  node.inputs = {{"start", Values<float>({}, {0.0f})},
                 {"limit", Values<float>({}, {1e30f})},
                 {"delta", Values<float>({}, {1e-10f})}};
  node.outputs = {DataType::kFloat32};
  ExpectRefused(node, "byte size overflows 64 bits");
}

// Coordinates 1e30 past the image: with zero padding nearest sampling reads
// nothing; border and reflection padding bring them back onto a pixel.
TEST(CpuEpUndefinedValues, GridSampleFarOutsideTheImageIsDefined) {
  for (const char* padding : {"zeros", "border", "reflection"}) {
    TensorNode node;
    node.op = "GridSample";
    node.opset = 16;
    node.inputs = {{"x", Values<float>({1, 1, 2, 2}, {1, 2, 3, 4})},
                   {"grid", Values<float>({1, 1, 2, 2}, {1e30f, -1e30f, -1e30f, 1e30f})}};
    node.outputs = {DataType::kFloat32};
    node.attributes = {StringAttribute("mode", "nearest"),
                       StringAttribute("padding_mode", padding)};
    auto result = RunTensorNode(std::move(node));
    ASSERT_TRUE(result.ok()) << padding << ": " << result.status().message();
    for (float v : (*result)[0].values<float>()) {
      if (std::string(padding) == "zeros") {
        EXPECT_EQ(v, 0.0f) << padding;
      } else {
        EXPECT_TRUE(v == 1 || v == 2 || v == 3 || v == 4) << padding << " sampled " << v;
      }
    }
  }
}

TEST(CpuEpUndefinedValues, BoolInputHoldingAByteOtherThanZeroOrOneIsRefused) {
  nxrt::Tensor x = nxrt::Tensor::Zeros(DataType::kBool, {3}).value();
  static_cast<uint8_t*>(x.data())[1] = 1;
  static_cast<uint8_t*>(x.data())[2] = 2;
  TensorNode node;
  node.op = "Not";
  node.opset = 1;
  node.inputs = {{"x", std::move(x)}};
  node.outputs = {DataType::kBool};
  ExpectRefused(node, "input 'x' element 2 holds the byte 2; a bool tensor holds only 0 and 1");
}

}  // namespace
}  // namespace nxrt_test
