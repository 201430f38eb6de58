#include "kernel_cache/constant_inputs.hpp"

#include <vector>

#include <gtest/gtest.h>

#include "mock_ep_fixture.hpp"

namespace nxrt::kernel_cache {
namespace {

using kernel_cache_test::TestGraph;
using kernel_cache_test::XwShapes;

TEST(ConstantInputsTest, ResolvesInitializersToDtypeShapeAndStoreBytes) {
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", /*with_initializer=*/true);
  const std::vector<InputShape> shapes = XwShapes(5);
  auto constants = ResolveKernelConstantInputs(g.graph(), node, g.graph().node(node), shapes);
  ASSERT_TRUE(constants.ok()) << constants.status().ToString();
  ASSERT_EQ(constants->size(), 1u);
  const nxrt_constant_input& w = (*constants)[0];
  const graph::Value& value = g.graph().value(*g.graph().node(node).inputs[1]);
  const graph::TensorData& stored = g.graph().weights->Get(*value.initializer);
  EXPECT_EQ(w.input_index, 1u);
  EXPECT_EQ(w.dtype, NXRT_DTYPE_FLOAT32);
  ASSERT_EQ(w.rank, 1u);
  EXPECT_EQ(w.dims, shapes[1].dims.data());
  EXPECT_EQ(w.dims[0], 3);
  EXPECT_EQ(w.bytes, stored.bytes.data());
  EXPECT_EQ(w.byte_size, 3 * sizeof(float));
  EXPECT_EQ(static_cast<const float*>(w.bytes)[2], 3.0f);
  EXPECT_NE(w.bytes_persist, 0) << "store bytes are lent for the kernel's lifetime";
}

TEST(ConstantInputsTest, ANodeWithoutInitializersHasNoConstants) {
  TestGraph g;
  const graph::NodeId node = g.AddNode("Relu", "relu", /*with_initializer=*/false);
  const std::vector<InputShape> shapes{InputShape{{2, 3}}};
  auto constants = ResolveKernelConstantInputs(g.graph(), node, g.graph().node(node), shapes);
  ASSERT_TRUE(constants.ok()) << constants.status().ToString();
  EXPECT_TRUE(constants->empty());
}

TEST(ConstantInputsTest, MissingBytesAreAnInternalErrorNamingTheValue) {
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", /*with_initializer=*/true);
  graph::Value& w = g.graph().value(*g.graph().node(node).inputs[1]);
  w.initializer = graph::WeightRef{999};
  auto constants = ResolveKernelConstantInputs(g.graph(), node, g.graph().node(node), XwShapes(2));
  ASSERT_FALSE(constants.ok());
  EXPECT_EQ(constants.status().code(), StatusCode::kInternal);
  EXPECT_NE(constants.status().message().find("'add_w'"), std::string::npos);
  EXPECT_NE(constants.status().message().find("hand_made.onnx"), std::string::npos);
}

TEST(ConstantInputsTest, AMissingShapeIsAnInternalErrorNamingTheValue) {
  TestGraph g;
  const graph::NodeId node = g.AddNode("Add", "add", /*with_initializer=*/true);
  const std::vector<InputShape> only_x{InputShape{{2, 3}}};
  auto constants = ResolveKernelConstantInputs(g.graph(), node, g.graph().node(node), only_x);
  ASSERT_FALSE(constants.ok());
  EXPECT_EQ(constants.status().code(), StatusCode::kInternal);
  EXPECT_NE(constants.status().message().find("'add_w'"), std::string::npos);
}

}  // namespace
}  // namespace nxrt::kernel_cache
