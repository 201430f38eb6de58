// Models as exporters write them run as ONNX Runtime runs them: dims named
// '?' or written as -1 take any extent, each its own, and an input declared
// as a scalar takes a one-element tensor of any rank as that scalar.
#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "session/mock_session_support.hpp"

namespace {

// y = a + b; a is [?, -1] and b a declared scalar.
std::string LooseDeclarationsModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("loose");
  auto declare = [](onnx::ValueInfoProto* info, const char* name) {
    info->set_name(name);
    auto* tensor = info->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    return tensor->mutable_shape();
  };
  onnx::TensorShapeProto* a = declare(graph->add_input(), "a");
  a->add_dim()->set_dim_param("?");
  a->add_dim()->set_dim_value(-1);
  declare(graph->add_input(), "b");
  onnx::TensorShapeProto* y = declare(graph->add_output(), "y");
  y->add_dim()->set_dim_param("?");
  y->add_dim()->set_dim_param("?");
  onnx::NodeProto* add = graph->add_node();
  add->set_op_type("Add");
  add->set_name("add");
  add->add_input("a");
  add->add_input("b");
  add->add_output("y");
  return model.SerializeAsString();
}

TEST(ExporterSpellings, UnnamedDimsTakeAnyExtentsAndADeclaredScalarAnyRank) {
  const std::string bytes = LooseDeclarationsModel();
  auto session = nxrt::Session::Create(
      nxrt_test::TestEnvironment(),
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()),
      "loose.onnx", std::filesystem::temp_directory_path(),
      nxrt_test::MockOptions(nxrt_test::TestLogId()));
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const auto run = [&](std::vector<int64_t> b_shape, std::vector<float> b) {
    std::vector<nxrt::NamedTensor> inputs{{"a", nxrt_test::Floats({2, 3}, {1, 2, 3, 4, 5, 6})},
                                          {"b", nxrt_test::Floats(std::move(b_shape), b)}};
    return (*session)->Run(inputs);
  };
  for (const std::vector<int64_t>& b_shape : {std::vector<int64_t>{}, {1}, {1, 1}}) {
    auto outputs = run(b_shape, {10});
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    EXPECT_EQ((*outputs)[0].shape(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(nxrt_test::ValuesOf((*outputs)[0]), (std::vector<float>{11, 12, 13, 14, 15, 16}));
  }
  // More than one element is no scalar: one line, and the session runs on.
  auto refused = run({2}, {1, 2});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("input 'b' has rank 1 [2], expected rank 0"),
            std::string::npos)
      << refused.status().message();
  EXPECT_TRUE(run({}, {1}).ok());
}

}  // namespace
