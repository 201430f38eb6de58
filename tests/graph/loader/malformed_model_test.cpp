// Every malformed model gives one clear error naming the model, the node and
// the fault, and never crashes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "onnx_model_builder.hpp"

namespace nxrt::graph {
namespace {

namespace fs = std::filesystem;
using testing::AddInput;
using testing::AddNode;
using testing::AddOutput;
using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::Load;
using testing::NewModel;
using ::testing::Not;

// A valid model: y = Relu(x).
onnx::ModelProto ReluModel() {
  onnx::ModelProto model = NewModel();
  AddInput(model, "x");
  AddNode(model, "Relu", "relu", {"x"}, {"y"});
  AddOutput(model, "y");
  return model;
}

std::string ErrorOf(const Result<Graph>& result) {
  EXPECT_FALSE(result.ok());
  return result.ok() ? std::string() : result.status().message();
}

// A com.microsoft node (an op onnx does not define), importing that domain.
onnx::NodeProto* AddContribNode(onnx::ModelProto& model, const std::string& op,
                                const std::string& name, std::vector<std::string> inputs,
                                std::vector<std::string> outputs) {
  onnx::OperatorSetIdProto* import = model.add_opset_import();
  import->set_domain("com.microsoft");
  import->set_version(1);
  onnx::NodeProto* node = AddNode(model, op, name, std::move(inputs), std::move(outputs));
  node->set_domain("com.microsoft");
  return node;
}

// Error messages are a single line.
MATCHER(OneLine, "is a single line") {
  return arg.find('\n') == std::string::npos;
}

TEST(MalformedModelTest, ValidBaselineLoads) {
  Result<Graph> graph = Load(ReluModel());
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_EQ(graph->nodes.size(), 1u);
}

TEST(MalformedModelTest, MissingFile) {
  Result<Graph> graph = LoadModelFromFile("/nonexistent/folder/model.onnx");
  EXPECT_EQ(graph.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(ErrorOf(graph), AllOf(HasSubstr("/nonexistent/folder/model.onnx"),
                                    HasSubstr("does not exist"), OneLine()));
}

TEST(MalformedModelTest, DirectoryInsteadOfFile) {
  EXPECT_THAT(ErrorOf(LoadModelFromFile(fs::temp_directory_path())),
              HasSubstr("not a regular file"));
}

TEST(MalformedModelTest, UnreadableFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads files whatever their mode";
  const fs::path file = fs::temp_directory_path() / "nxrt_loader_unreadable.onnx";
  {
    std::ofstream out(file, std::ios::binary);
    out << ReluModel().SerializeAsString();
  }
  fs::permissions(file, fs::perms::none);
  EXPECT_THAT(ErrorOf(LoadModelFromFile(file)), HasSubstr("cannot be opened"));
  fs::remove(file);
}

TEST(MalformedModelTest, TruncatedFile) {
  const std::vector<std::byte> whole = testing::Serialize(ReluModel());
  // Every proper prefix must fail cleanly; most cut a length-delimited field.
  for (size_t cut = 0; cut < whole.size(); ++cut) {
    Result<Graph> graph = LoadModelFromBytes(std::span(whole.data(), cut), "truncated.onnx", ".");
    ASSERT_FALSE(graph.ok()) << "a prefix of " << cut << " bytes loaded";
    EXPECT_THAT(graph.status().message(), AllOf(HasSubstr("truncated.onnx"), OneLine()));
  }
}

TEST(MalformedModelTest, BadProtobuf) {
  const std::vector<std::byte> garbage = {std::byte{0xFF}, std::byte{0xFF}, std::byte{0xFF},
                                          std::byte{0x0F}, std::byte{0x3A}, std::byte{0x7F}};
  EXPECT_THAT(ErrorOf(LoadModelFromBytes(garbage, "garbage.onnx", ".")),
              AllOf(HasSubstr("garbage.onnx"), HasSubstr("not a valid ONNX protobuf"), OneLine()));
}

TEST(MalformedModelTest, NoOpsetImport) {
  onnx::ModelProto model = ReluModel();
  model.clear_opset_import();
  EXPECT_THAT(ErrorOf(Load(model)), HasSubstr("no opset_import"));
}

TEST(MalformedModelTest, InputNobodyProduces) {
  onnx::ModelProto model = NewModel();
  AddInput(model, "x");
  AddNode(model, "Add", "adder", {"x", "ghost"}, {"y"});
  AddOutput(model, "y");
  EXPECT_THAT(ErrorOf(Load(model)),
              AllOf(HasSubstr("bad.onnx"), HasSubstr("'adder'"), HasSubstr("(Add)"),
                    HasSubstr("'ghost'"), HasSubstr("produced by no node"), OneLine()));
}

TEST(MalformedModelTest, TwoProducersOfOneValue) {
  onnx::ModelProto model = NewModel();
  AddInput(model, "x");
  AddNode(model, "Relu", "first", {"x"}, {"y"});
  AddNode(model, "Sigmoid", "second", {"x"}, {"y"});
  AddOutput(model, "y");
  EXPECT_THAT(ErrorOf(Load(model)),
              AllOf(HasSubstr("'second' (Sigmoid)"), HasSubstr("'first' (Relu)"), HasSubstr("'y'"),
                    HasSubstr("also produced"), OneLine()));
}

TEST(MalformedModelTest, NodeOutputShadowsGraphInput) {
  onnx::ModelProto model = NewModel();
  AddInput(model, "x");
  AddNode(model, "Relu", "relu", {"x"}, {"x"});
  AddOutput(model, "x");
  EXPECT_THAT(ErrorOf(Load(model)), AllOf(HasSubstr("'relu' (Relu)"), HasSubstr("'x'")));
}

TEST(MalformedModelTest, Cycle) {
  onnx::ModelProto model = NewModel();
  AddInput(model, "x");
  AddNode(model, "Add", "a", {"x", "c"}, {"a_out"});
  AddNode(model, "Relu", "b", {"a_out"}, {"b_out"});
  AddNode(model, "Relu", "c", {"b_out"}, {"c"});
  AddOutput(model, "c");
  const std::string error = ErrorOf(Load(model));
  EXPECT_THAT(error, AllOf(HasSubstr("bad.onnx"), HasSubstr("cycle"), OneLine()));
  EXPECT_TRUE(error.find("'a' (Add)") != std::string::npos ||
              error.find("'b' (Relu)") != std::string::npos ||
              error.find("'c' (Relu)") != std::string::npos)
      << error;
}

TEST(MalformedModelTest, NodeReadingItsOwnOutput) {
  onnx::ModelProto model = NewModel();
  AddInput(model, "x");
  AddNode(model, "Add", "loop", {"x", "y"}, {"y"});
  AddOutput(model, "y");
  EXPECT_THAT(ErrorOf(Load(model)), AllOf(HasSubstr("'loop' (Add)"), HasSubstr("cycle")));
}

TEST(MalformedModelTest, CycleOffTheEntryPath) {
  // The cycle sits behind a node that is not on it; the error still names a
  // node of the cycle.
  onnx::ModelProto model = NewModel();
  AddInput(model, "x");
  AddNode(model, "Add", "tail", {"x", "p"}, {"t"});
  AddNode(model, "Relu", "p_node", {"q"}, {"p"});
  AddNode(model, "Relu", "q_node", {"p"}, {"q"});
  AddOutput(model, "t");
  const std::string error = ErrorOf(Load(model));
  EXPECT_THAT(error, HasSubstr("cycle"));
  EXPECT_THAT(error, Not(HasSubstr("'tail'")));
}

TEST(MalformedModelTest, UnknownDtypeOnInput) {
  onnx::ModelProto model = ReluModel();
  model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(99);
  EXPECT_THAT(ErrorOf(Load(model)),
              AllOf(HasSubstr("graph input 'x'"), HasSubstr("unknown element type 99"), OneLine()));
}

TEST(MalformedModelTest, UnknownDtypeOnInitializer) {
  onnx::ModelProto model = ReluModel();
  auto* w = model.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(77);
  w->add_dims(1);
  w->set_raw_data(std::string(4, '\0'));
  EXPECT_THAT(ErrorOf(Load(model)),
              AllOf(HasSubstr("initializer 'w'"), HasSubstr("unknown tensor data_type 77")));
}

TEST(MalformedModelTest, UnknownDtypeInConstantAttribute) {
  onnx::ModelProto model = NewModel();
  auto* node = AddNode(model, "Constant", "const", {}, {"y"});
  auto* attr = node->add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  attr->mutable_t()->set_data_type(123);
  AddOutput(model, "y");
  EXPECT_THAT(ErrorOf(Load(model)),
              AllOf(HasSubstr("'const' (Constant)"), HasSubstr("attribute 'value'"),
                    HasSubstr("data_type 123")));
}

TEST(MalformedModelTest, NegativeInitializerDim) {
  onnx::ModelProto model = ReluModel();
  auto* w = model.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(-2);
  EXPECT_THAT(ErrorOf(Load(model)), AllOf(HasSubstr("initializer 'w'"), HasSubstr("negative")));
}

TEST(MalformedModelTest, InitializerElementCountOverflows) {
  onnx::ModelProto model = ReluModel();
  auto* w = model.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(int64_t{1} << 40);
  w->add_dims(int64_t{1} << 40);
  EXPECT_THAT(ErrorOf(Load(model)), AllOf(HasSubstr("initializer 'w'"), HasSubstr("overflow")));
}

TEST(MalformedModelTest, InitializerByteSizeOverflows) {
  // The count fits in 64 bits; the count times eight bytes does not.
  onnx::ModelProto model = ReluModel();
  auto* w = model.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::DOUBLE);
  w->add_dims(int64_t{1} << 62);
  w->set_raw_data(std::string(8, '\0'));
  EXPECT_THAT(ErrorOf(Load(model)), AllOf(HasSubstr("initializer 'w'"), HasSubstr("overflow")));
}

TEST(MalformedModelTest, InitializerRawSizeDisagreesWithDims) {
  onnx::ModelProto model = ReluModel();
  auto* w = model.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->set_raw_data(std::string(7, '\0'));
  EXPECT_THAT(ErrorOf(Load(model)),
              AllOf(HasSubstr("initializer 'w'"), HasSubstr("need 8 bytes"), HasSubstr("holds 7")));
}

TEST(MalformedModelTest, InitializerTypedCountDisagreesWithDims) {
  onnx::ModelProto model = ReluModel();
  auto* w = model.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::INT64);
  w->add_dims(3);
  w->add_int64_data(1);
  EXPECT_THAT(ErrorOf(Load(model)), AllOf(HasSubstr("initializer 'w'"), HasSubstr("holds 1")));
}

TEST(MalformedModelTest, GraphOutputNeverProduced) {
  onnx::ModelProto model = ReluModel();
  AddOutput(model, "nowhere");
  EXPECT_THAT(ErrorOf(Load(model)),
              AllOf(HasSubstr("bad.onnx"), HasSubstr("graph output 'nowhere'"),
                    HasSubstr("never produced"), OneLine()));
}

TEST(MalformedModelTest, DuplicateGraphInput) {
  onnx::ModelProto model = ReluModel();
  AddInput(model, "x");
  EXPECT_THAT(ErrorOf(Load(model)), HasSubstr("declared twice"));
}

// An initializer the model also lists as a graph input must fit the type
// declared there, which stands for the values a run may feed in its place.
TEST(MalformedModelTest, InitializerDisagreeingWithItsDeclaredInput) {
  const auto with_initializer = [](onnx::TensorProto::DataType dtype, std::vector<int64_t> dims) {
    onnx::ModelProto model = ReluModel();
    onnx::TensorProto* init = model.mutable_graph()->add_initializer();
    init->set_name("x");
    init->set_data_type(dtype);
    int64_t count = 1;
    for (int64_t d : dims) {
      init->add_dims(d);
      count *= d;
    }
    for (int64_t i = 0; i < count; ++i) {
      if (dtype == onnx::TensorProto::FLOAT) {
        init->add_float_data(1.0f);
      } else {
        init->add_int64_data(1);
      }
    }
    return model;
  };
  EXPECT_THAT(
      ErrorOf(Load(with_initializer(onnx::TensorProto::FLOAT, {3}))),
      AllOf(HasSubstr("bad.onnx"), HasSubstr("initializer 'x'"),
            HasSubstr("has dims [3] but the graph input of that name is declared [2]"), OneLine()));
  EXPECT_THAT(ErrorOf(Load(with_initializer(onnx::TensorProto::FLOAT, {2, 1}))),
              HasSubstr("has dims [2,1] but the graph input of that name is declared [2]"));
  EXPECT_THAT(ErrorOf(Load(with_initializer(onnx::TensorProto::INT64, {2}))),
              AllOf(HasSubstr("holds int64 but the graph input of that name is declared float"),
                    OneLine()));
  EXPECT_TRUE(Load(with_initializer(onnx::TensorProto::FLOAT, {2})).ok());
}

TEST(MalformedModelTest, NodeWithoutOpType) {
  onnx::ModelProto model = ReluModel();
  model.mutable_graph()->mutable_node(0)->clear_op_type();
  EXPECT_THAT(ErrorOf(Load(model)), AllOf(HasSubstr("'relu'"), HasSubstr("no op_type")));
}

// Input and output counts are held to onnx's schema of the op at the
// model's opset (a kernel reads its required inputs without counting them).
TEST(MalformedModelTest, NodeShortOfARequiredInput) {
  onnx::ModelProto model = NewModel(11);
  AddInput(model, "start");
  AddInput(model, "limit");
  AddNode(model, "Range", "range", {"start", "limit"}, {"y"});
  AddOutput(model, "y");
  EXPECT_THAT(ErrorOf(Load(model)),
              AllOf(HasSubstr("bad.onnx"), HasSubstr("'range' (Range)"), HasSubstr("has 2 inputs"),
                    HasSubstr("takes 3 inputs at opset 11"), OneLine()));
}

TEST(MalformedModelTest, NodeNamingARequiredInputEmpty) {
  onnx::ModelProto model = NewModel();
  AddInput(model, "x");
  AddNode(model, "Add", "adder", {"", "x"}, {"y"});
  AddOutput(model, "y");
  EXPECT_THAT(ErrorOf(Load(model)),
              AllOf(HasSubstr("'adder' (Add)"), HasSubstr("input 0 is required but named empty"),
                    OneLine()));
}

TEST(MalformedModelTest, NodeWithTooManyInputsOrOutputs) {
  onnx::ModelProto inputs = NewModel();
  AddInput(inputs, "x");
  AddNode(inputs, "Relu", "relu", {"x", "x"}, {"y"});
  AddOutput(inputs, "y");
  EXPECT_THAT(ErrorOf(Load(inputs)),
              AllOf(HasSubstr("'relu' (Relu)"), HasSubstr("has 2 inputs; the op takes 1 input"),
                    OneLine()));

  // TopK makes exactly two outputs.
  onnx::ModelProto outputs = NewModel();
  AddInput(outputs, "x");
  AddInput(outputs, "k", {1}, onnx::TensorProto::INT64);
  AddNode(outputs, "TopK", "top", {"x", "k"}, {"values", "indices", "extra"});
  AddOutput(outputs, "values");
  EXPECT_THAT(ErrorOf(Load(outputs)),
              AllOf(HasSubstr("'top' (TopK)"), HasSubstr("has 3 outputs; the op makes 2 outputs"),
                    OneLine()));
}

// The arity in force is the op's newest version at or below the opset:
// ReduceMax took its axes as an input from opset 18 on, and Clip its bounds
// from opset 11; ops onnx does not define are left to the EPs.
TEST(MalformedModelTest, ArityFollowsTheOpsetAndSkipsOtherDomains) {
  for (const auto& [opset, loads] : {std::pair{13, false}, std::pair{18, true}}) {
    onnx::ModelProto model = NewModel(opset);
    AddInput(model, "x");
    AddInput(model, "axes", {1}, onnx::TensorProto::INT64);
    AddNode(model, "ReduceMax", "max", {"x", "axes"}, {"y"});
    AddOutput(model, "y");
    EXPECT_EQ(Load(model).ok(), loads) << "opset " << opset;
  }
  onnx::ModelProto optional_bounds = NewModel(11);
  AddInput(optional_bounds, "x");
  AddInput(optional_bounds, "high");
  AddNode(optional_bounds, "Clip", "clip", {"x", "", "high"}, {"y"});
  AddOutput(optional_bounds, "y");
  Result<Graph> clip = Load(optional_bounds);
  EXPECT_TRUE(clip.ok()) << clip.status().ToString();

  onnx::ModelProto contrib = NewModel();
  AddInput(contrib, "x");
  AddNode(contrib, "Relu", "relu", {"x"}, {"r"});
  AddContribNode(contrib, "FusedGemm", "gemm", {"r"}, {"y"});
  AddOutput(contrib, "y");
  Result<Graph> graph = Load(contrib);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
}

onnx::AttributeProto* AddIntAttribute(onnx::NodeProto* node, const std::string& name,
                                      int64_t value) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
  return attribute;
}

// onnx's own shape inference reads Scan's body without asking whether there
// is one; the loader must stop such a node first.
TEST(MalformedModelTest, NodeLackingARequiredAttribute) {
  onnx::ModelProto model = NewModel(16);
  AddInput(model, "x");
  AddIntAttribute(AddNode(model, "Scan", "scan", {"x"}, {"y"}), "num_scan_inputs", 1);
  AddOutput(model, "y");
  EXPECT_THAT(
      ErrorOf(Load(model)),
      AllOf(HasSubstr("'scan' (Scan)"),
            HasSubstr("lacks attribute 'body', which the op requires at opset 16"), OneLine()));
}

TEST(MalformedModelTest, AttributeOfAnotherTypeThanTheOpReads) {
  onnx::ModelProto model = NewModel();
  AddInput(model, "x");
  onnx::AttributeProto* to = AddIntAttribute(AddNode(model, "Cast", "cast", {"x"}, {"y"}), "to", 0);
  to->set_type(onnx::AttributeProto::FLOAT);
  to->set_f(7.0f);
  AddOutput(model, "y");
  EXPECT_THAT(ErrorOf(Load(model)),
              AllOf(HasSubstr("'cast' (Cast)"), HasSubstr("attribute 'to' is float"),
                    HasSubstr("the op takes int"), OneLine()));
}

// A misspelt attribute would otherwise leave the op on its default. Names
// starting with "__" belong to tools, and ops onnx does not define keep
// whatever attributes their EP reads.
TEST(MalformedModelTest, AttributeTheOpDoesNotKnow) {
  onnx::ModelProto model = ReluModel();
  onnx::NodeProto* relu = model.mutable_graph()->mutable_node(0);
  AddIntAttribute(relu, "__tool_mark", 1);
  Result<Graph> marked = Load(model);
  EXPECT_TRUE(marked.ok()) << marked.status().ToString();
  AddIntAttribute(relu, "alp\nha", 1);
  EXPECT_THAT(ErrorOf(Load(model)),
              AllOf(HasSubstr("'relu' (Relu)"), HasSubstr("has attribute 'alp\\nha'"),
                    HasSubstr("which the op does not know"), OneLine()));

  onnx::ModelProto contrib = NewModel();
  AddInput(contrib, "x");
  AddIntAttribute(AddContribNode(contrib, "FusedGemm", "gemm", {"x"}, {"y"}), "anything", 1);
  AddOutput(contrib, "y");
  Result<Graph> graph = Load(contrib);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
}

TEST(MalformedModelTest, ErrorInsideBodyNamesTheEnclosingNode) {
  onnx::ModelProto model = NewModel();
  AddInput(model, "cond", {}, onnx::TensorProto::BOOL);
  auto* node = AddNode(model, "If", "branch", {"cond"}, {"y"});
  for (const char* name : {"then_branch", "else_branch"}) {
    auto* attr = node->add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::GRAPH);
    auto* body = attr->mutable_g();
    AddNode(body, "Relu", "inner", {"missing_in_body"}, {"r"});
    testing::SetTensorType(body->add_output(), "r", onnx::TensorProto::FLOAT, {2});
  }
  AddOutput(model, "y");
  EXPECT_THAT(ErrorOf(Load(model)),
              AllOf(HasSubstr("'branch' (If)"), HasSubstr("then_branch"),
                    HasSubstr("'inner' (Relu)"), HasSubstr("'missing_in_body'"), OneLine()));
}

}  // namespace
}  // namespace nxrt::graph
