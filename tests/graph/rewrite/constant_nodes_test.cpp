// ConstantNodesToInitializers: a Constant node's tensor becomes an
// initializer its readers take as a constant input, and the Constants that
// must stay nodes (a graph output, a string tensor, a value given another
// way) stay; the Constants inside an If's branches are made initializers of
// their branch; an Identity of a constant names its tensor, and one of an
// initializer a run may replace stays.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "nxrt/graph/graph_rewrites.hpp"
#include "onnx_model_builder.hpp"

namespace nxrt::graph {
namespace {

using testing::AddInput;
using testing::AddNode;
using testing::AddOutput;
using testing::Load;
using testing::NewModel;

void SetTensorValue(onnx::NodeProto* node, int32_t data_type, std::vector<int64_t> dims) {
  auto* attr = node->add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto* t = attr->mutable_t();
  t->set_data_type(data_type);
  for (int64_t d : dims) t->add_dims(d);
}

// y = x + c (c a Constant node of [1, 2, 3]) and k (a Constant) as a second output.
onnx::ModelProto Model() {
  onnx::ModelProto model = NewModel();
  AddInput(model, "x", {3});
  auto* c = AddNode(model, "Constant", "c_node", {}, {"c"});
  SetTensorValue(c, onnx::TensorProto::FLOAT, {3});
  for (float v : {1.0f, 2.0f, 3.0f}) c->mutable_attribute(0)->mutable_t()->add_float_data(v);
  AddNode(model, "Add", "add", {"x", "c"}, {"y"});
  auto* k = AddNode(model, "Constant", "k_node", {}, {"k"});
  SetTensorValue(k, onnx::TensorProto::INT64, {1});
  k->mutable_attribute(0)->mutable_t()->add_int64_data(7);
  AddOutput(model, "y", {3});
  AddOutput(model, "k", {1}, onnx::TensorProto::INT64);
  return model;
}

TEST(ConstantNodesToInitializers, AConstantsTensorBecomesAnInitializer) {
  Result<Graph> graph = Load(Model());
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const std::vector<std::string> changes = ConstantNodesToInitializers(*graph);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0], "1 Constant node made initializers, which kernels prepare once");
  // The Add and the Constant of the graph output are left.
  ASSERT_EQ(graph->nodes.size(), 2u);
  EXPECT_EQ(graph->nodes[0].op_type, "Add");
  EXPECT_EQ(graph->nodes[1].name, "k_node");
  const Value& c = graph->value(*graph->FindValue("c"));
  ASSERT_TRUE(c.is_constant());
  EXPECT_FALSE(c.producer.valid());
  EXPECT_EQ(c.dtype, DataType::kFloat32);
  ASSERT_TRUE(c.shape && c.shape->size() == 1 && (*c.shape)[0].extent() == 3);
  const TensorData& data = graph->weights->Get(*c.initializer);
  std::vector<float> values(3);
  ASSERT_EQ(data.bytes.size(), sizeof(float) * 3);
  std::memcpy(values.data(), data.bytes.data(), data.bytes.size());
  EXPECT_EQ(values, (std::vector<float>{1, 2, 3}));
  // The k output's producer still points at its node after the removal.
  EXPECT_EQ(graph->value(*graph->FindValue("k")).producer.index, 1u);
}

TEST(ConstantNodesToInitializers, StringAndScalarFormConstantsStayNodes) {
  onnx::ModelProto model = NewModel();
  auto* s = AddNode(model, "Constant", "s_node", {}, {"s"});
  SetTensorValue(s, onnx::TensorProto::STRING, {1});
  s->mutable_attribute(0)->mutable_t()->add_string_data("word");
  auto* f = AddNode(model, "Constant", "f_node", {}, {"f"});
  auto* attr = f->add_attribute();
  attr->set_name("value_float");
  attr->set_type(onnx::AttributeProto::FLOAT);
  attr->set_f(2.5f);
  AddNode(model, "Identity", "keep_s", {"s"}, {"s_out"});
  AddNode(model, "Identity", "keep_f", {"f"}, {"f_out"});
  AddOutput(model, "s_out", {1}, onnx::TensorProto::STRING);
  AddOutput(model, "f_out", {});
  Result<Graph> graph = Load(model);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_TRUE(ConstantNodesToInitializers(*graph).empty());
  EXPECT_EQ(graph->nodes.size(), 4u);
}

// y = x + Identity(w) + Identity(Identity(c)), with w an initializer and c
// a Constant node; z = Identity(o), with o an initializer a run may replace.
TEST(ConstantNodesToInitializers, AnIdentityOfAConstantNamesItsTensor) {
  onnx::ModelProto model = NewModel();
  AddInput(model, "x", {3});
  AddInput(model, "o", {3});
  for (const char* name : {"w", "o"}) {
    onnx::TensorProto* t = model.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(3);
    for (float v : {4.0f, 5.0f, 6.0f}) t->add_float_data(v);
  }
  auto* c = AddNode(model, "Constant", "c_node", {}, {"c"});
  SetTensorValue(c, onnx::TensorProto::FLOAT, {3});
  for (float v : {1.0f, 2.0f, 3.0f}) c->mutable_attribute(0)->mutable_t()->add_float_data(v);
  AddNode(model, "Identity", "w_alias", {"w"}, {"w1"});
  AddNode(model, "Identity", "c_alias", {"c"}, {"c1"});
  AddNode(model, "Identity", "c_alias_alias", {"c1"}, {"c2"});
  AddNode(model, "Add", "add_w", {"x", "w1"}, {"xw"});
  AddNode(model, "Add", "add_c", {"xw", "c2"}, {"y"});
  AddNode(model, "Identity", "o_alias", {"o"}, {"z"});
  AddOutput(model, "y", {3});
  AddOutput(model, "z", {3});
  Result<Graph> graph = Load(model);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const std::vector<std::string> changes = ConstantNodesToInitializers(*graph);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0],
            "1 Constant node and 3 Identity nodes of constants made initializers, which kernels "
            "prepare once");
  ASSERT_EQ(graph->nodes.size(), 3u);
  EXPECT_EQ(graph->nodes[0].name, "add_w");
  EXPECT_EQ(graph->nodes[1].name, "add_c");
  EXPECT_EQ(graph->nodes[2].name, "o_alias");
  const Value& w1 = graph->value(*graph->FindValue("w1"));
  ASSERT_TRUE(w1.is_constant());
  EXPECT_EQ(w1.initializer->index, graph->value(*graph->FindValue("w")).initializer->index);
  EXPECT_TRUE(graph->value(*graph->FindValue("c2")).is_constant());
}

// y = If(cond) then x + c else x - c, each branch with its own Constant c
// (the form Silero's VAD keeps its weights in), and a branch whose output is
// its Constant, which stays a node.
TEST(ConstantNodesToInitializers, ConstantsInsideIfBranchesBecomeTheirInitializers) {
  onnx::ModelProto model = NewModel();
  AddInput(model, "x", {3});
  AddInput(model, "cond", {}, onnx::TensorProto::BOOL);
  auto* choose = AddNode(model, "If", "choose", {"cond"}, {"y"});
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* attr = choose->add_attribute();
    attr->set_name(branch);
    attr->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* body = attr->mutable_g();
    body->set_name(branch);
    onnx::NodeProto* c = body->add_node();
    c->set_op_type("Constant");
    c->set_name(std::string(branch) + "_c");
    c->add_output(std::string(branch) + "_c");
    SetTensorValue(c, onnx::TensorProto::FLOAT, {3});
    for (float v : {1.0f, 2.0f, 3.0f}) c->mutable_attribute(0)->mutable_t()->add_float_data(v);
    onnx::NodeProto* op = body->add_node();
    op->set_op_type(std::string(branch) == "then_branch" ? "Add" : "Sub");
    op->set_name(std::string(branch) + "_op");
    op->add_input("x");
    op->add_input(std::string(branch) + "_c");
    op->add_output(std::string(branch) + "_y");
    onnx::ValueInfoProto* out = body->add_output();
    out->set_name(std::string(branch) + "_y");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  AddOutput(model, "y", {3});
  Result<Graph> graph = Load(model);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const std::vector<std::string> changes = ConstantNodesToInitializers(*graph);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0], "2 Constant nodes made initializers, which kernels prepare once");
  ASSERT_EQ(graph->nodes.size(), 1u);
  for (const Attribute& attribute : graph->nodes[0].attributes) {
    ASSERT_TRUE(attribute.graph) << attribute.name;
    const Graph& body = *attribute.graph;
    ASSERT_EQ(body.nodes.size(), 1u) << attribute.name;
    const Value& c = body.value(*body.FindValue(attribute.name + "_c"));
    EXPECT_TRUE(c.is_constant()) << attribute.name;
    EXPECT_FALSE(c.producer.valid()) << attribute.name;
  }
}

}  // namespace
}  // namespace nxrt::graph
