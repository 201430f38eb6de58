// What the loader keeps of a model's description of itself: ModelProto's
// producer, domain, version and doc strings, and its metadata_props.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "onnx_model_builder.hpp"
#include "test_case_folders.hpp"

namespace nxrt::graph {
namespace {

using testing::AddInput;
using testing::AddNode;
using testing::AddOutput;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::Load;
using testing::NewModel;
using ::testing::Pair;

onnx::ModelProto IdentityModel() {
  onnx::ModelProto model = NewModel();
  AddInput(model, "x");
  AddOutput(model, "y");
  AddNode(model, "Identity", "id", {"x"}, {"y"});
  return model;
}

void AddProperty(onnx::ModelProto& model, const std::string& key, const std::string& value) {
  auto* property = model.add_metadata_props();
  property->set_key(key);
  property->set_value(value);
}

TEST(ModelMetadataTest, KeepsTheProducerVersionDescriptionsAndProperties) {
  onnx::ModelProto model = IdentityModel();
  model.set_producer_name("exporter");
  model.set_producer_version("2.1");
  model.set_domain("ai.example");
  model.set_model_version(7);
  model.set_doc_string("classifies things");
  model.mutable_graph()->set_doc_string("the main graph");
  AddProperty(model, "labels", "cat,dog");
  AddProperty(model, "tokenizer", "{\"bos\": 1}");

  Result<Graph> graph = Load(model, "described.onnx");
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const ModelMetadata& metadata = graph->metadata;
  EXPECT_EQ(metadata.producer_name, "exporter");
  EXPECT_EQ(metadata.producer_version, "2.1");
  EXPECT_EQ(metadata.domain, "ai.example");
  EXPECT_EQ(metadata.model_version, 7);
  EXPECT_EQ(metadata.description, "classifies things");
  EXPECT_EQ(metadata.graph_description, "the main graph");
  EXPECT_THAT(metadata.custom,
              ElementsAre(Pair("labels", "cat,dog"), Pair("tokenizer", "{\"bos\": 1}")));
}

TEST(ModelMetadataTest, ARepeatedPropertyKeepsItsLastValue) {
  onnx::ModelProto model = IdentityModel();
  AddProperty(model, "revision", "1");
  AddProperty(model, "revision", "2");
  Result<Graph> graph = Load(model, "repeated.onnx");
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_THAT(graph->metadata.custom, ElementsAre(Pair("revision", "2")));
}

TEST(ModelMetadataTest, AModelThatSaysNothingHasEmptyMetadata) {
  Result<Graph> graph = Load(IdentityModel(), "silent.onnx");
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_EQ(graph->metadata.producer_name, "");
  EXPECT_EQ(graph->metadata.model_version, 0);
  EXPECT_THAT(graph->metadata.custom, IsEmpty());
}

// Real data: the pytorch-converted cases name their exporter.
TEST(ModelMetadataTest, ReadsTheProducerOfABackendTestModel) {
  const auto model_file = testing::kDebianTestData / "pytorch-converted/test_ReLU/model.onnx";
  if (!std::filesystem::exists(model_file)) GTEST_SKIP() << model_file << " is not installed";
  std::ifstream in(model_file, std::ios::binary);
  onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromIstream(&in));
  ASSERT_FALSE(proto.producer_name().empty());

  Result<Graph> graph = LoadModelFromFile(model_file);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_EQ(graph->metadata.producer_name, proto.producer_name());
  EXPECT_EQ(graph->metadata.producer_version, proto.producer_version());
}

}  // namespace
}  // namespace nxrt::graph
