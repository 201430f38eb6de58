// Initializers written in ONNX's typed fields land in the weight store in
// the raw little-endian layout, checked against byte patterns worked out by
// hand from the ONNX spec.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "onnx_model_builder.hpp"

namespace nxrt::graph {
namespace {

using ::testing::ElementsAre;

// Element types newer than the libonnx 1.12 headers; numbers from onnx.proto.
constexpr int32_t kOnnxFloat8E4M3FN = 17;
constexpr int32_t kOnnxInt4 = 22;

std::vector<uint8_t> Bytes(const TensorData& data) {
  std::vector<uint8_t> out(data.bytes.size());
  std::memcpy(out.data(), data.bytes.data(), data.bytes.size());
  return out;
}

// Loads a model whose only content is the initializer `w` and returns it.
class InitializerDecodingTest : public ::testing::Test {
 protected:
  onnx::TensorProto* NewInitializer(int32_t data_type, std::initializer_list<int64_t> dims) {
    model_ = testing::NewModel();
    auto* w = model_.mutable_graph()->add_initializer();
    w->set_name("w");
    w->set_data_type(data_type);
    for (int64_t d : dims) w->add_dims(d);
    testing::AddNode(model_, "Identity", "id", {"w"}, {"y"});
    testing::AddOutput(model_, "y");
    return w;
  }

  const TensorData& Loaded() {
    Result<Graph> graph = testing::Load(model_, "typed.onnx");
    EXPECT_TRUE(graph.ok()) << graph.status().ToString();
    if (!graph.ok()) {
      static const TensorData kEmpty;
      return kEmpty;
    }
    graph_ = std::move(graph).value();
    const Value& w = graph_.value(*graph_.FindValue("w"));
    EXPECT_TRUE(w.initializer.has_value());
    EXPECT_FALSE(w.is_graph_input);
    return graph_.weights->Get(*w.initializer);
  }

  onnx::ModelProto model_;
  Graph graph_;
};

TEST_F(InitializerDecodingTest, FloatData) {
  auto* w = NewInitializer(onnx::TensorProto::FLOAT, {2});
  w->add_float_data(1.0f);
  w->add_float_data(-2.0f);
  const TensorData& data = Loaded();
  EXPECT_EQ(data.dtype, DataType::kFloat32);
  EXPECT_EQ(data.dims, std::vector<int64_t>({2}));
  // IEEE 754: 1.0f = 0x3F800000, -2.0f = 0xC0000000.
  EXPECT_THAT(Bytes(data), ElementsAre(0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x00, 0xC0));
}

TEST_F(InitializerDecodingTest, Int32DataForInt8) {
  auto* w = NewInitializer(onnx::TensorProto::INT8, {3});
  for (int v : {-3, 127, -128}) w->add_int32_data(v);
  EXPECT_THAT(Bytes(Loaded()), ElementsAre(0xFD, 0x7F, 0x80));
}

TEST_F(InitializerDecodingTest, Int32DataForUint8AndBool) {
  auto* w = NewInitializer(onnx::TensorProto::UINT8, {2});
  for (int v : {255, 1}) w->add_int32_data(v);
  EXPECT_THAT(Bytes(Loaded()), ElementsAre(0xFF, 0x01));
  w = NewInitializer(onnx::TensorProto::BOOL, {3});
  for (int v : {1, 0, 1}) w->add_int32_data(v);
  const TensorData& data = Loaded();
  EXPECT_EQ(data.dtype, DataType::kBool);
  EXPECT_THAT(Bytes(data), ElementsAre(1, 0, 1));
}

TEST_F(InitializerDecodingTest, Int32DataForSixteenBitTypes) {
  auto* w = NewInitializer(onnx::TensorProto::INT16, {2});
  for (int v : {-2, 0x1234}) w->add_int32_data(v);
  EXPECT_THAT(Bytes(Loaded()), ElementsAre(0xFE, 0xFF, 0x34, 0x12));
  w = NewInitializer(onnx::TensorProto::UINT16, {1});
  w->add_int32_data(0xABCD);
  EXPECT_THAT(Bytes(Loaded()), ElementsAre(0xCD, 0xAB));
  // float16 bit patterns: 1.0 = 0x3C00, -2.0 = 0xC000.
  w = NewInitializer(onnx::TensorProto::FLOAT16, {2});
  for (int v : {0x3C00, 0xC000}) w->add_int32_data(v);
  EXPECT_THAT(Bytes(Loaded()), ElementsAre(0x00, 0x3C, 0x00, 0xC0));
  // bfloat16 1.0 = 0x3F80.
  w = NewInitializer(onnx::TensorProto::BFLOAT16, {1});
  w->add_int32_data(0x3F80);
  const TensorData& data = Loaded();
  EXPECT_EQ(data.dtype, DataType::kBfloat16);
  EXPECT_THAT(Bytes(data), ElementsAre(0x80, 0x3F));
}

TEST_F(InitializerDecodingTest, Int32DataForFloat8AndPackedFourBit) {
  auto* w = NewInitializer(kOnnxFloat8E4M3FN, {2});
  for (int v : {0x38, 0xC0}) w->add_int32_data(v);
  EXPECT_THAT(Bytes(Loaded()), ElementsAre(0x38, 0xC0));
  // Three int4 elements pack into two bytes, one int32_data entry per byte.
  w = NewInitializer(kOnnxInt4, {3});
  for (int v : {0x21, 0x03}) w->add_int32_data(v);
  const TensorData& data = Loaded();
  EXPECT_EQ(data.dtype, DataType::kInt4);
  EXPECT_THAT(Bytes(data), ElementsAre(0x21, 0x03));
}

TEST_F(InitializerDecodingTest, Int32Data) {
  auto* w = NewInitializer(onnx::TensorProto::INT32, {2});
  for (int v : {-1, 0x01020304}) w->add_int32_data(v);
  EXPECT_THAT(Bytes(Loaded()), ElementsAre(0xFF, 0xFF, 0xFF, 0xFF, 0x04, 0x03, 0x02, 0x01));
}

TEST_F(InitializerDecodingTest, Int64Data) {
  auto* w = NewInitializer(onnx::TensorProto::INT64, {2});
  w->add_int64_data(-5);
  w->add_int64_data(int64_t{1} << 40);
  EXPECT_THAT(Bytes(Loaded()), ElementsAre(0xFB, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,  //
                                           0, 0, 0, 0, 0, 0x01, 0, 0));
}

TEST_F(InitializerDecodingTest, DoubleData) {
  auto* w = NewInitializer(onnx::TensorProto::DOUBLE, {1});
  w->add_double_data(0.25);  // 0x3FD0000000000000
  EXPECT_THAT(Bytes(Loaded()), ElementsAre(0, 0, 0, 0, 0, 0, 0xD0, 0x3F));
}

TEST_F(InitializerDecodingTest, Uint64DataForUint32AndUint64) {
  auto* w = NewInitializer(onnx::TensorProto::UINT32, {2});
  w->add_uint64_data(0xFFFFFFFFu);
  w->add_uint64_data(3);
  EXPECT_THAT(Bytes(Loaded()), ElementsAre(0xFF, 0xFF, 0xFF, 0xFF, 3, 0, 0, 0));
  w = NewInitializer(onnx::TensorProto::UINT64, {1});
  w->add_uint64_data(uint64_t{1} << 63);
  EXPECT_THAT(Bytes(Loaded()), ElementsAre(0, 0, 0, 0, 0, 0, 0, 0x80));
}

TEST_F(InitializerDecodingTest, ComplexTakesTwoEntriesPerElement) {
  auto* w = NewInitializer(onnx::TensorProto::COMPLEX64, {1});
  w->add_float_data(1.0f);
  w->add_float_data(-2.0f);
  const TensorData& data = Loaded();
  EXPECT_EQ(data.dtype, DataType::kComplex64);
  EXPECT_THAT(Bytes(data), ElementsAre(0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x00, 0xC0));
}

TEST_F(InitializerDecodingTest, StringData) {
  auto* w = NewInitializer(onnx::TensorProto::STRING, {2});
  w->add_string_data("a");
  w->add_string_data("bc");
  const TensorData& data = Loaded();
  EXPECT_EQ(data.dtype, DataType::kString);
  EXPECT_TRUE(data.bytes.empty());
  EXPECT_THAT(data.strings, ElementsAre("a", "bc"));
}

TEST_F(InitializerDecodingTest, RawDataIsKeptAsIs) {
  auto* w = NewInitializer(onnx::TensorProto::UINT16, {2});
  w->set_raw_data(std::string("\x01\x02\x03\x04", 4));
  EXPECT_THAT(Bytes(Loaded()), ElementsAre(1, 2, 3, 4));
}

TEST_F(InitializerDecodingTest, ScalarAndEmptyTensors) {
  auto* w = NewInitializer(onnx::TensorProto::INT64, {});
  w->add_int64_data(9);
  const TensorData& scalar = Loaded();
  EXPECT_TRUE(scalar.dims.empty());
  EXPECT_THAT(Bytes(scalar), ElementsAre(9, 0, 0, 0, 0, 0, 0, 0));
  NewInitializer(onnx::TensorProto::FLOAT, {0, 3});
  const TensorData& empty = Loaded();
  EXPECT_EQ(empty.dims, std::vector<int64_t>({0, 3}));
  EXPECT_TRUE(empty.bytes.empty());
}

TEST_F(InitializerDecodingTest, ConstantNodeKeepsItsTensorInTheStore) {
  model_ = testing::NewModel();
  auto* node = testing::AddNode(model_, "Constant", "c", {}, {"y"});
  auto* attr = node->add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  attr->mutable_t()->set_data_type(onnx::TensorProto::INT8);
  attr->mutable_t()->add_dims(2);
  attr->mutable_t()->add_int32_data(-1);
  attr->mutable_t()->add_int32_data(2);
  testing::AddOutput(model_, "y", {2}, onnx::TensorProto::INT8);
  Result<Graph> graph = testing::Load(model_);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  ASSERT_EQ(graph->nodes.size(), 1u);
  EXPECT_EQ(graph->nodes[0].op_type, "Constant");
  const Attribute* value = graph->nodes[0].FindAttribute("value");
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(value->type, AttributeType::kTensor);
  ASSERT_TRUE(value->tensor.has_value());
  EXPECT_THAT(Bytes(graph->weights->Get(*value->tensor)), ElementsAre(0xFF, 0x02));
}

TEST_F(InitializerDecodingTest, SparseInitializerIsDensified) {
  model_ = testing::NewModel();
  auto* sparse = model_.mutable_graph()->add_sparse_initializer();
  sparse->add_dims(2);
  sparse->add_dims(3);
  auto* values = sparse->mutable_values();
  values->set_name("w");
  values->set_data_type(onnx::TensorProto::FLOAT);
  values->add_dims(2);
  values->add_float_data(5.0f);
  values->add_float_data(7.0f);
  auto* indices = sparse->mutable_indices();
  indices->set_data_type(onnx::TensorProto::INT64);
  // Coordinates (0, 1) and (1, 2): linear positions 1 and 5.
  indices->add_dims(2);
  indices->add_dims(2);
  for (int64_t v : {0, 1, 1, 2}) indices->add_int64_data(v);
  testing::AddNode(model_, "Identity", "id", {"w"}, {"y"});
  testing::AddOutput(model_, "y", {2, 3});
  const TensorData& data = Loaded();
  EXPECT_EQ(data.dims, std::vector<int64_t>({2, 3}));
  std::vector<float> dense(6);
  ASSERT_EQ(data.bytes.size(), sizeof(float) * dense.size());
  std::memcpy(dense.data(), data.bytes.data(), data.bytes.size());
  EXPECT_THAT(dense, ElementsAre(0.0f, 5.0f, 0.0f, 0.0f, 0.0f, 7.0f));
}

TEST_F(InitializerDecodingTest, SparseIndexOutsideTheTensorIsRefused) {
  model_ = testing::NewModel();
  auto* sparse = model_.mutable_graph()->add_sparse_initializer();
  sparse->add_dims(4);
  auto* values = sparse->mutable_values();
  values->set_name("w");
  values->set_data_type(onnx::TensorProto::FLOAT);
  values->add_dims(1);
  values->add_float_data(1.0f);
  auto* indices = sparse->mutable_indices();
  indices->set_data_type(onnx::TensorProto::INT64);
  indices->add_dims(1);
  indices->add_int64_data(4);
  testing::AddNode(model_, "Identity", "id", {"w"}, {"y"});
  testing::AddOutput(model_, "y", {4});
  Result<Graph> graph = testing::Load(model_, "sparse.onnx");
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(graph.status().message(),
              ::testing::AllOf(::testing::HasSubstr("sparse.onnx"),
                               ::testing::HasSubstr("sparse initializer 'w'"),
                               ::testing::HasSubstr("beyond the dense tensor")));
}

}  // namespace
}  // namespace nxrt::graph
