// What the loader builds from a well-formed model: inputs and initializers,
// symbols for dims, topological order, absent optional slots, domains and
// attributes of every type.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "onnx_model_builder.hpp"

namespace nxrt::graph {
namespace {

using testing::AddInput;
using testing::AddNode;
using testing::AddOutput;
using ::testing::ElementsAre;
using testing::Load;
using testing::NewModel;

Graph LoadOrFail(const onnx::ModelProto& model) {
  Result<Graph> graph = Load(model, "structure.onnx");
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return graph.ok() ? std::move(graph).value() : Graph();
}

const Value& ValueNamed(const Graph& graph, const std::string& name) {
  std::optional<ValueId> id = graph.FindValue(name);
  EXPECT_TRUE(id.has_value()) << name;
  return graph.value(id.value_or(ValueId{0}));
}

TEST(GraphStructureTest, InitializerListedAsInputStaysAnOverridableInitializer) {
  onnx::ModelProto model = NewModel();
  AddInput(model, "x");
  AddInput(model, "bias");
  auto* bias = model.mutable_graph()->add_initializer();
  bias->set_name("bias");
  bias->set_data_type(onnx::TensorProto::FLOAT);
  bias->add_dims(2);
  bias->add_float_data(1.0f);
  bias->add_float_data(2.0f);
  auto* scale = model.mutable_graph()->add_initializer();
  scale->set_name("scale");
  scale->set_data_type(onnx::TensorProto::FLOAT);
  scale->add_dims(2);
  scale->add_float_data(3.0f);
  scale->add_float_data(4.0f);
  AddNode(model, "Add", "add", {"x", "bias"}, {"a"});
  AddNode(model, "Mul", "mul", {"a", "scale"}, {"y"});
  AddOutput(model, "y");
  Graph graph = LoadOrFail(model);

  ASSERT_EQ(graph.inputs.size(), 1u);
  EXPECT_EQ(graph.value(graph.inputs[0]).name, "x");
  const Value& b = ValueNamed(graph, "bias");
  EXPECT_TRUE(b.initializer.has_value());
  EXPECT_TRUE(b.is_graph_input);
  EXPECT_TRUE(b.is_overridable());
  EXPECT_FALSE(b.is_constant());
  const Value& s = ValueNamed(graph, "scale");
  EXPECT_TRUE(s.initializer.has_value());
  EXPECT_FALSE(s.is_graph_input);
  EXPECT_TRUE(s.is_constant());
  EXPECT_FALSE(s.is_overridable());
  EXPECT_EQ(s.dtype, DataType::kFloat32);
  ASSERT_TRUE(s.shape.has_value());
  EXPECT_THAT(*s.shape, ElementsAre(Dim::Static(2)));
  ASSERT_EQ(graph.outputs.size(), 1u);
  EXPECT_EQ(graph.value(graph.outputs[0]).name, "y");
}

TEST(GraphStructureTest, DimParamsBecomeSharedSymbolsAndUnnamedDimsFreshOnes) {
  onnx::ModelProto model = NewModel();
  // The model itself uses the name the loader might generate first.
  auto set_dims = [](onnx::ValueInfoProto* info, std::vector<std::string> params) {
    auto* shape = info->mutable_type()->mutable_tensor_type()->mutable_shape();
    for (size_t i = 0; i < params.size(); ++i) {
      if (params[i] == "?") continue;
      if (params[i] == "3") {
        shape->mutable_dim(static_cast<int>(i))->set_dim_value(3);
      } else {
        shape->mutable_dim(static_cast<int>(i))->set_dim_param(params[i]);
      }
    }
  };
  AddInput(model, "x", {-1, -1, -1, -1});
  set_dims(model.mutable_graph()->mutable_input(0), {"batch", "3", "?", "?"});
  AddInput(model, "z", {-1, -1});
  set_dims(model.mutable_graph()->mutable_input(1), {"batch", "unnamed_dim_0"});
  AddNode(model, "Relu", "relu", {"x"}, {"y"});
  AddOutput(model, "y", {-1});
  set_dims(model.mutable_graph()->mutable_output(0), {"batch"});
  Graph graph = LoadOrFail(model);

  const Shape& x = *ValueNamed(graph, "x").shape;
  const Shape& z = *ValueNamed(graph, "z").shape;
  const Shape& y = *ValueNamed(graph, "y").shape;
  ASSERT_EQ(x.size(), 4u);
  EXPECT_TRUE(x[0].is_symbolic());
  EXPECT_EQ(graph.symbol(x[0].symbol()).name, "batch");
  EXPECT_EQ(x[0], z[0]);
  EXPECT_EQ(x[0], y[0]);
  EXPECT_EQ(x[1], Dim::Static(3));
  // Each unnamed dim is a symbol of its own, clashing with no declared name.
  ASSERT_TRUE(x[2].is_symbolic() && x[3].is_symbolic());
  std::set<std::string> names = {graph.symbol(x[2].symbol()).name, graph.symbol(x[3].symbol()).name,
                                 graph.symbol(z[1].symbol()).name, "batch"};
  EXPECT_EQ(names.size(), 4u);
  EXPECT_EQ(graph.symbol(z[1].symbol()).name, "unnamed_dim_0");
  for (const Symbol& s : graph.symbols) EXPECT_EQ(s.origin, SymbolOrigin::kDeclared);
}

TEST(GraphStructureTest, ValueWithoutShapeHasUnknownRank) {
  onnx::ModelProto model = NewModel();
  AddInput(model, "x");
  model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  AddNode(model, "Relu", "relu", {"x"}, {"y"});
  AddOutput(model, "y");
  Graph graph = LoadOrFail(model);
  EXPECT_FALSE(ValueNamed(graph, "x").shape.has_value());
  EXPECT_EQ(ValueNamed(graph, "x").dtype, DataType::kFloat32);
}

TEST(GraphStructureTest, NodesAreSortedTopologically) {
  onnx::ModelProto model = NewModel();
  AddInput(model, "x");
  AddNode(model, "Add", "last", {"b", "a"}, {"y"});
  AddNode(model, "Relu", "second", {"a"}, {"b"});
  AddNode(model, "Relu", "first", {"x"}, {"a"});
  AddNode(model, "Neg", "independent", {"x"}, {"n"});
  AddOutput(model, "y");
  AddOutput(model, "n");
  Graph graph = LoadOrFail(model);
  std::vector<std::string> order;
  for (const Node& n : graph.nodes) order.push_back(n.name);
  EXPECT_THAT(order, ElementsAre("first", "second", "last", "independent"));
  // Producers point at the sorted positions.
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const auto& out : graph.nodes[i].outputs) {
      EXPECT_EQ(graph.value(*out).producer.index, i);
    }
  }
}

TEST(GraphStructureTest, SortedModelKeepsItsOrder) {
  onnx::ModelProto model = NewModel();
  AddInput(model, "x");
  AddNode(model, "Neg", "n1", {"x"}, {"a"});
  AddNode(model, "Neg", "n2", {"x"}, {"b"});
  AddNode(model, "Add", "n3", {"a", "b"}, {"y"});
  AddOutput(model, "y");
  Graph graph = LoadOrFail(model);
  std::vector<std::string> order;
  for (const Node& n : graph.nodes) order.push_back(n.name);
  EXPECT_THAT(order, ElementsAre("n1", "n2", "n3"));
}

TEST(GraphStructureTest, EmptyNamesAreAbsentOptionalSlots) {
  onnx::ModelProto model = NewModel();
  AddInput(model, "x");
  AddInput(model, "hi", {});
  AddNode(model, "Clip", "clip", {"x", "", "hi"}, {"c"});
  AddNode(model, "Dropout", "drop", {"c"}, {"y", ""});
  AddOutput(model, "y");
  Graph graph = LoadOrFail(model);
  const Node& clip = graph.nodes[0];
  ASSERT_EQ(clip.inputs.size(), 3u);
  EXPECT_TRUE(clip.inputs[0].has_value());
  EXPECT_FALSE(clip.inputs[1].has_value());
  EXPECT_EQ(graph.value(*clip.inputs[2]).name, "hi");
  const Node& drop = graph.nodes[1];
  ASSERT_EQ(drop.outputs.size(), 2u);
  EXPECT_TRUE(drop.outputs[0].has_value());
  EXPECT_FALSE(drop.outputs[1].has_value());
}

TEST(GraphStructureTest, DomainsAndOpsetsAreNormalised) {
  onnx::ModelProto model = NewModel(13);
  model.mutable_opset_import(0)->set_domain("ai.onnx");
  auto* ms = model.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  AddInput(model, "x");
  AddNode(model, "Relu", "relu", {"x"}, {"a"})->set_domain("ai.onnx");
  AddNode(model, "FusedGelu", "gelu", {"a"}, {"y"})->set_domain("com.microsoft");
  AddOutput(model, "y");
  Graph graph = LoadOrFail(model);
  EXPECT_EQ(graph.OpsetFor(""), 13);
  EXPECT_EQ(graph.OpsetFor("com.microsoft"), 1);
  EXPECT_FALSE(graph.OpsetFor("ai.onnx").has_value());
  EXPECT_TRUE(graph.nodes[0].is_default_domain());
  EXPECT_EQ(graph.nodes[1].domain, "com.microsoft");
}

TEST(GraphStructureTest, ValueInfoTypesIntermediates) {
  onnx::ModelProto model = NewModel();
  AddInput(model, "x", {4});
  onnx::AttributeProto* to = AddNode(model, "Cast", "cast", {"x"}, {"i"})->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::INT64);
  AddNode(model, "Neg", "neg", {"i"}, {"y"});
  testing::SetTensorType(model.mutable_graph()->add_value_info(), "i", onnx::TensorProto::INT64,
                         {4});
  AddOutput(model, "y", {4}, onnx::TensorProto::INT64);
  Graph graph = LoadOrFail(model);
  EXPECT_EQ(ValueNamed(graph, "i").dtype, DataType::kInt64);
  EXPECT_EQ(ValueNamed(graph, "i").kind, ValueKind::kTensor);
  EXPECT_EQ(ValueNamed(graph, "y").dtype, DataType::kInt64);
}

TEST(GraphStructureTest, AttributesOfEveryType) {
  onnx::ModelProto model = NewModel();
  AddInput(model, "x");
  auto* node = AddNode(model, "Custom", "custom", {"x"}, {"y"});
  node->set_domain("test.domain");
  auto add = [node](const std::string& name, onnx::AttributeProto::AttributeType type) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(type);
    return a;
  };
  add("f", onnx::AttributeProto::FLOAT)->set_f(0.5f);
  add("i", onnx::AttributeProto::INT)->set_i(-7);
  add("s", onnx::AttributeProto::STRING)->set_s("text");
  auto* floats = add("floats", onnx::AttributeProto::FLOATS);
  floats->add_floats(1.5f);
  floats->add_floats(2.5f);
  auto* ints = add("ints", onnx::AttributeProto::INTS);
  ints->add_ints(3);
  auto* strings = add("strings", onnx::AttributeProto::STRINGS);
  strings->add_strings("p");
  strings->add_strings("q");
  auto* tensors = add("tensors", onnx::AttributeProto::TENSORS);
  for (int64_t v : {10, 20}) {
    auto* t = tensors->add_tensors();
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_int64_data(v);
  }
  auto* graphs = add("graphs", onnx::AttributeProto::GRAPHS);
  for (const char* body_name : {"b0", "b1"}) {
    auto* body = graphs->add_graphs();
    body->set_name(body_name);
    AddNode(body, "Identity", "inner", {"x"}, {"o"});
    testing::SetTensorType(body->add_output(), "o", onnx::TensorProto::FLOAT, {2});
  }
  auto* tp = add("tp", onnx::AttributeProto::TYPE_PROTO)->mutable_tp();
  tp->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::INT32);
  auto* tps = add("tps", onnx::AttributeProto::TYPE_PROTOS);
  tps->add_type_protos()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::UINT8);
  // An old exporter's attribute without a type: deduced from the field set.
  auto* untyped = node->add_attribute();
  untyped->set_name("legacy");
  untyped->set_i(42);
  AddOutput(model, "y");
  Graph graph = LoadOrFail(model);
  const Node& n = graph.nodes.at(0);
  EXPECT_FLOAT_EQ(n.FindAttribute("f")->f, 0.5f);
  EXPECT_EQ(n.FindAttribute("i")->i, -7);
  EXPECT_EQ(n.FindAttribute("s")->s, "text");
  EXPECT_THAT(n.FindAttribute("floats")->floats, ElementsAre(1.5f, 2.5f));
  EXPECT_THAT(n.FindAttribute("ints")->ints, ElementsAre(3));
  EXPECT_THAT(n.FindAttribute("strings")->strings, ElementsAre("p", "q"));
  const Attribute* t = n.FindAttribute("tensors");
  EXPECT_EQ(t->type, AttributeType::kTensors);
  ASSERT_EQ(t->tensors.size(), 2u);
  int64_t second = 0;
  std::memcpy(&second, graph.weights->Get(t->tensors[1]).bytes.data(), sizeof(second));
  EXPECT_EQ(second, 20);
  const Attribute* g = n.FindAttribute("graphs");
  EXPECT_EQ(g->type, AttributeType::kGraphs);
  ASSERT_EQ(g->graphs.size(), 2u);
  EXPECT_EQ(g->graphs[1]->name, "b1");
  const Attribute* type = n.FindAttribute("tp");
  EXPECT_EQ(type->type, AttributeType::kTypeProto);
  ASSERT_TRUE(type->type_proto.has_value());
  EXPECT_EQ(type->type_proto->kind, ValueKind::kSequence);
  EXPECT_EQ(type->type_proto->dtype, DataType::kInt32);
  const Attribute* types = n.FindAttribute("tps");
  ASSERT_EQ(types->type_protos.size(), 1u);
  EXPECT_EQ(types->type_protos[0].dtype, DataType::kUint8);
  EXPECT_EQ(n.FindAttribute("legacy")->type, AttributeType::kInt);
  EXPECT_EQ(n.FindAttribute("legacy")->i, 42);
}

}  // namespace
}  // namespace nxrt::graph
