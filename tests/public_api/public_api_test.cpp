// What an application gets from libnxrt alone: it finds the plugins beside
// libnxrt, loads a model from bytes, runs it and reports errors as Status,
// through the exported API and nothing else.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>
#include <vector>

#include "nxrt/environment.hpp"
#include "nxrt/session.hpp"
#include "nxrt/version.hpp"

namespace {

std::string AddModelBytes() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name("add");
  onnx::NodeProto& node = *graph.add_node();
  node.set_op_type("Add");
  node.add_input("a");
  node.add_input("b");
  node.add_output("c");
  for (const char* name : {"a", "b"}) {
    onnx::ValueInfoProto& input = *graph.add_input();
    input.set_name(name);
    input.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    input.mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);
  }
  onnx::ValueInfoProto& output = *graph.add_output();
  output.set_name("c");
  output.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  return model.SerializeAsString();
}

TEST(PublicApi, PluginsAreFoundBesideLibnxrt) {
  auto environment = nxrt::Environment::Create();
  ASSERT_TRUE(environment.ok()) << environment.status().ToString();
  const auto folders = (*environment)->PluginSearchFolders();
  ASSERT_FALSE(folders.empty());
  EXPECT_EQ(folders.back(), std::filesystem::canonical(NXRT_BINARY_DIR "/lib"));
  bool cpu_loaded = false;
  for (const nxrt::PluginInfo& plugin : (*environment)->DiscoverPlugins()) {
    cpu_loaded |= plugin.name == "cpu" && plugin.loaded;
  }
  EXPECT_TRUE(cpu_loaded);
  EXPECT_FALSE(nxrt::Version().empty());
}

TEST(PublicApi, AModelFromBytesRunsAndAWrongInputIsAStatus) {
  auto environment = nxrt::Environment::Create();
  ASSERT_TRUE(environment.ok()) << environment.status().ToString();
  const std::string bytes = AddModelBytes();
  auto session = nxrt::Session::Create(
      *environment,
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()),
      "add.onnx", std::filesystem::current_path());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto a = nxrt::Tensor::FromValues<float>({3}, std::vector<float>{1, 2, 3});
  auto b = nxrt::Tensor::FromValues<float>({3}, std::vector<float>{10, 20, 30});
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<nxrt::NamedTensor> inputs{{"a", *a}, {"b", *b}};
  auto outputs = (*session)->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  const auto c = (*outputs)[0].values<float>();
  EXPECT_EQ(std::vector<float>(c.begin(), c.end()), (std::vector<float>{11, 22, 33}));

  auto wrong = nxrt::Tensor::FromValues<float>({4}, std::vector<float>{1, 2, 3, 4});
  ASSERT_TRUE(wrong.ok());
  inputs[0].tensor = *wrong;
  auto refused = (*session)->Run(inputs);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), nxrt::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("'a'"), std::string::npos)
      << refused.status().message();
}

TEST(PublicApi, TheLogLevelIsSetForTheProcessAndAnUnknownOneRefused) {
  EXPECT_TRUE(nxrt::Environment::SetLogLevel("error").ok());
  const nxrt::Status refused = nxrt::Environment::SetLogLevel("loud");
  EXPECT_EQ(refused.code(), nxrt::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("'loud'"), std::string::npos) << refused.message();
}

}  // namespace
