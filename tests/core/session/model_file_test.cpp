// Sessions created from a serialized ONNX model, as bytes and as a file, what
// they keep of the model's metadata, and the one-line error for a model that
// cannot be loaded.
#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>

#include "session/mock_session_support.hpp"

namespace {

// y = Relu(a + b) over float [N, 2].
std::string AddReluModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("add_relu");
  for (const char* name : {"a", "b", "y"}) {
    onnx::ValueInfoProto* info =
        std::string(name) == "y" ? graph->add_output() : graph->add_input();
    info->set_name(name);
    auto* tensor = info->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    tensor->mutable_shape()->add_dim()->set_dim_param("N");
    tensor->mutable_shape()->add_dim()->set_dim_value(2);
  }
  onnx::NodeProto* add = graph->add_node();
  add->set_op_type("Add");
  add->set_name("add");
  add->add_input("a");
  add->add_input("b");
  add->add_output("s");
  onnx::NodeProto* relu = graph->add_node();
  relu->set_op_type("Relu");
  relu->set_name("relu");
  relu->add_input("s");
  relu->add_output("y");
  return model.SerializeAsString();
}

void ExpectRuns(nxrt::Session& session) {
  std::vector<nxrt::NamedTensor> inputs{{"a", nxrt_test::Floats({2, 2}, {1, -2, 3, -4})},
                                        {"b", nxrt_test::Floats({2, 2}, {1, 1, 1, 1})}};
  auto outputs = session.Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_EQ(nxrt_test::ValuesOf((*outputs)[0]), (std::vector<float>{2, 0, 4, 0}));
}

nxrt::Result<std::unique_ptr<nxrt::Session>> CreateFromBytes(const std::string& bytes,
                                                             const std::string& name) {
  return nxrt::Session::Create(
      nxrt_test::TestEnvironment(),
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()),
      name, std::filesystem::temp_directory_path(), nxrt_test::MockOptions(nxrt_test::TestLogId()));
}

TEST(ModelFile, CreatesFromBytes) {
  auto session = CreateFromBytes(AddReluModel(), "add_relu.onnx");
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_EQ((*session)->inputs().at(0).shape, (std::vector<std::string>{"N", "2"}));
  ExpectRuns(**session);
}

TEST(ModelFile, KeepsWhatTheModelSaysAboutItself) {
  onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(AddReluModel()));
  proto.set_producer_name("exporter");
  proto.set_model_version(3);
  auto* property = proto.add_metadata_props();
  property->set_key("labels");
  property->set_value("negative,positive");
  auto session = CreateFromBytes(proto.SerializeAsString(), "described.onnx");
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const nxrt::ModelMetadata& metadata = (*session)->metadata();
  EXPECT_EQ(metadata.producer_name, "exporter");
  EXPECT_EQ(metadata.model_version, 3);
  EXPECT_EQ(metadata.custom, (std::map<std::string, std::string>{{"labels", "negative,positive"}}));
}

TEST(ModelFile, CreatesFromAFile) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("nxrt_session_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / "add_relu.onnx";
  std::ofstream(file, std::ios::binary) << AddReluModel();
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), file,
                                       nxrt_test::MockOptions(nxrt_test::TestLogId()));
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  ExpectRuns(**session);
}

TEST(ModelFile, MissingFileIsOneClearError) {
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(),
                                       std::filesystem::path("/no/such/model.onnx"),
                                       nxrt_test::MockOptions(nxrt_test::TestLogId()));
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find("/no/such/model.onnx"), std::string::npos)
      << session.status().message();
  EXPECT_EQ(session.status().message().find('\n'), std::string::npos);
}

}  // namespace
