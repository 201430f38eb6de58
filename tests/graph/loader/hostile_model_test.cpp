// Models and test data written to hurt the reader: subgraphs nested past any
// stack, files over protobuf's 2 GiB, tensors whose dims claim far more
// elements than they carry. Each gets one line naming the file and the fault,
// without the reader recursing, reading or allocating what the file claims.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "nxrt/graph/test_data.hpp"
#include "onnx_model_builder.hpp"

namespace nxrt::graph {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kTwoToThe40 = int64_t{1} << 40;

MATCHER(OneLine, "is a single line") {
  return arg.find('\n') == std::string::npos;
}

std::string ErrorOf(const Result<Graph>& result) {
  EXPECT_FALSE(result.ok());
  return result.ok() ? std::string() : result.status().message();
}

void AppendVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

size_t VarintSize(uint64_t value) {
  std::string bytes;
  AppendVarint(bytes, value);
  return bytes.size();
}

// The bytes of a model whose graph holds an If whose then_branch holds an If
// ... `depth` levels down. Written by hand, outermost first, because the
// protobuf classes would recurse as deep to serialize it.
std::string NestedIfModel(size_t depth) {
  // Each level: GraphProto{node: NodeProto{op_type: "If", attribute:
  // AttributeProto{name: "then_branch", type: GRAPH, g: <next level>}}}.
  const std::string op_type = std::string("\x22\x02", 2) + "If";
  const std::string attribute_head = std::string("\x0A\x0B", 2) + "then_branch" +
                                     std::string("\xA0\x01\x05", 3);  // type (field 20) GRAPH
  std::vector<uint64_t> graph_size(depth + 1, 0);
  std::vector<uint64_t> node_size(depth, 0);
  std::vector<uint64_t> attribute_size(depth, 0);
  for (size_t level = depth; level-- > 0;) {
    const uint64_t inner = graph_size[level + 1];
    attribute_size[level] = attribute_head.size() + 1 + VarintSize(inner) + inner;
    node_size[level] =
        op_type.size() + 1 + VarintSize(attribute_size[level]) + attribute_size[level];
    graph_size[level] = 1 + VarintSize(node_size[level]) + node_size[level];
  }
  std::string model;
  model += std::string("\x08\x08", 2);          // ir_version 8
  model += std::string("\x42\x02\x10\x11", 4);  // opset_import {version 17}
  model += '\x3A';                              // graph
  AppendVarint(model, graph_size[0]);
  for (size_t level = 0; level < depth; ++level) {
    model += '\x0A';  // GraphProto.node
    AppendVarint(model, node_size[level]);
    model += op_type;
    model += '\x2A';  // NodeProto.attribute
    AppendVarint(model, attribute_size[level]);
    model += attribute_head;
    model += '\x32';  // AttributeProto.g
    AppendVarint(model, graph_size[level + 1]);
  }
  return model;
}

Result<Graph> LoadBytes(const std::string& bytes, const std::string& name) {
  return LoadModelFromBytes(
      std::span(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()), name, ".");
}

class TempFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device random;
    folder_ = fs::temp_directory_path() / ("nxrt_hostile_" + std::to_string(random()));
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }
  fs::path folder_;
};

TEST(HostileModelTest, SubgraphsNestedPastAnyStackGetOneLine) {
  // 100,000 levels are 300,000 nested messages: read recursively without a
  // bound, they would overflow the stack of the parser or of the loader.
  const std::string message = ErrorOf(LoadBytes(NestedIfModel(100000), "deep.onnx"));
  EXPECT_THAT(message, AllOf(HasSubstr("deep.onnx"), HasSubstr("nests its subgraphs"), OneLine()));
}

TEST(HostileModelTest, ShallowNestingIsReadAndJudgedAsAModel) {
  // The same shape three levels deep parses; its Ifs lack their condition.
  const std::string message = ErrorOf(LoadBytes(NestedIfModel(3), "shallow.onnx"));
  EXPECT_THAT(message, AllOf(HasSubstr("shallow.onnx"), HasSubstr("(If)"),
                             Not(HasSubstr("nests its subgraphs")), OneLine()));
}

using HostileFileTest = TempFolder;

TEST_F(HostileFileTest, ModelFileOver2GiBIsRefusedUnread) {
  // A sparse file: 2 GiB long, no disk used.
  const fs::path file = folder_ / "huge.onnx";
  { std::ofstream create(file, std::ios::binary); }
  fs::resize_file(file, uintmax_t{1} << 31);
  const std::string message = ErrorOf(LoadModelFromFile(file));
  EXPECT_THAT(message, AllOf(HasSubstr(file.string()), HasSubstr("larger than 2 GiB"),
                             HasSubstr("external data"), OneLine()));
}

TEST_F(HostileFileTest, DeeplyNestedModelFileGetsOneLine) {
  const fs::path file = folder_ / "deep.onnx";
  {
    std::ofstream out(file, std::ios::binary);
    out << NestedIfModel(100000);
  }
  EXPECT_THAT(ErrorOf(LoadModelFromFile(file)),
              AllOf(HasSubstr(file.string()), HasSubstr("nests its subgraphs"), OneLine()));
}

TEST_F(HostileFileTest, TestDataFileOver2GiBIsRefusedUnread) {
  const fs::path file = folder_ / "input_0.pb";
  { std::ofstream create(file, std::ios::binary); }
  fs::resize_file(file, uintmax_t{1} << 31);
  Result<TestValue> value = ReadTestValueFile(file, TestProtoKind::kTensor);
  ASSERT_FALSE(value.ok());
  EXPECT_THAT(value.status().message(),
              AllOf(HasSubstr(file.string()), HasSubstr("larger than 2 GiB"), OneLine()));
}

// y = Identity(x) beside an initializer `w` the test fills in.
onnx::ModelProto ModelWithInitializer(onnx::TensorProto** w) {
  onnx::ModelProto model = testing::NewModel();
  testing::AddInput(model, "x");
  testing::AddNode(model, "Identity", "copy", {"x"}, {"y"});
  testing::AddOutput(model, "y");
  *w = model.mutable_graph()->add_initializer();
  (*w)->set_name("w");
  return model;
}

TEST(HostileModelTest, RawDataFarShorterThanItsDimsIsRefusedUnallocated) {
  onnx::TensorProto* w = nullptr;
  onnx::ModelProto model = ModelWithInitializer(&w);
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(kTwoToThe40);
  w->set_raw_data(std::string(16, '\0'));
  EXPECT_THAT(ErrorOf(testing::Load(model, "claims.onnx")),
              AllOf(HasSubstr("claims.onnx"), HasSubstr("initializer 'w'"),
                    HasSubstr("need 4398046511104 bytes"), HasSubstr("holds 16"), OneLine()));
}

// A STRING tensor claiming 2^40 elements with three strings.
void MakeHostileStrings(onnx::TensorProto& tensor) {
  tensor.set_data_type(onnx::TensorProto::STRING);
  tensor.add_dims(kTwoToThe40);
  for (const char* s : {"a", "b", "c"}) tensor.add_string_data(s);
}

TEST(HostileModelTest, StringInitializerOfHostileSizeIsRefused) {
  onnx::TensorProto* w = nullptr;
  onnx::ModelProto model = ModelWithInitializer(&w);
  MakeHostileStrings(*w);
  EXPECT_THAT(ErrorOf(testing::Load(model, "strings.onnx")),
              AllOf(HasSubstr("strings.onnx"), HasSubstr("initializer 'w'"),
                    HasSubstr("1099511627776 strings"), HasSubstr("holds 3"), OneLine()));
}

// A sparse tensor of one listed element claiming 2^40 dense ones: filled in,
// terabytes of empty strings or zeros.
TEST(HostileModelTest, SparseInitializerDenserThanMemoryIsRefused) {
  for (const int32_t dtype : {onnx::TensorProto::STRING, onnx::TensorProto::FLOAT}) {
    onnx::ModelProto model = testing::NewModel();
    testing::AddInput(model, "x");
    testing::AddNode(model, "Identity", "copy", {"x"}, {"y"});
    testing::AddOutput(model, "y");
    onnx::SparseTensorProto* sparse = model.mutable_graph()->add_sparse_initializer();
    sparse->add_dims(kTwoToThe40);
    onnx::TensorProto* values = sparse->mutable_values();
    values->set_name("w");
    values->set_data_type(dtype);
    values->add_dims(1);
    if (dtype == onnx::TensorProto::STRING) {
      values->add_string_data("a");
    } else {
      values->add_float_data(1.0f);
    }
    onnx::TensorProto* indices = sparse->mutable_indices();
    indices->set_data_type(onnx::TensorProto::INT64);
    indices->add_dims(1);
    indices->add_int64_data(7);
    EXPECT_THAT(ErrorOf(testing::Load(model, "sparse.onnx")),
                AllOf(HasSubstr("sparse.onnx"), HasSubstr("sparse initializer 'w'"),
                      HasSubstr("1099511627776 dense elements"), HasSubstr("this machine's memory"),
                      OneLine()));
  }
}

TEST_F(HostileFileTest, StringTestDataOfHostileSizeIsRefused) {
  onnx::TensorProto tensor;
  tensor.set_name("text");
  MakeHostileStrings(tensor);
  const fs::path file = folder_ / "input_0.pb";
  {
    std::ofstream out(file, std::ios::binary);
    out << tensor.SerializeAsString();
  }
  for (TestProtoKind kind : {TestProtoKind::kTensor, TestProtoKind::kGuess}) {
    Result<TestValue> value = ReadTestValueFile(file, kind);
    ASSERT_FALSE(value.ok());
    EXPECT_THAT(value.status().message(),
                AllOf(HasSubstr(file.string()), HasSubstr("1099511627776 strings"),
                      HasSubstr("holds 3"), OneLine()));
  }
}

}  // namespace
}  // namespace nxrt::graph
