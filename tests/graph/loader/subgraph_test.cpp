// If/Loop/Scan bodies: loaded recursively into graphs that share the model's
// weight store, with the names they read from enclosing graphs as
// outer-scope values (an enclosing constant as a constant of their own), and
// ordering their node after those values' producers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "onnx_model_builder.hpp"

namespace nxrt::graph {
namespace {

using testing::AddInput;
using testing::AddNode;
using testing::AddOutput;
using testing::NewModel;
using testing::SetTensorType;

onnx::GraphProto* AddBody(onnx::NodeProto* node, const std::string& attribute) {
  auto* a = node->add_attribute();
  a->set_name(attribute);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(attribute);
  return a->mutable_g();
}

// y = If(cond) then Add(doubled, w_then) else Identity(x), where `doubled` is
// produced in the outer graph by a node listed after the If.
onnx::ModelProto IfModel() {
  onnx::ModelProto model = NewModel();
  AddInput(model, "cond", {}, onnx::TensorProto::BOOL);
  AddInput(model, "x", {-1});
  model.mutable_graph()
      ->mutable_input(1)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param("n");
  auto* if_node = AddNode(model, "If", "branch", {"cond"}, {"y"});
  onnx::GraphProto* then_body = AddBody(if_node, "then_branch");
  auto* w = then_body->add_initializer();
  w->set_name("w_then");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(1);
  w->add_float_data(3.0f);
  AddNode(then_body, "Add", "then_add", {"doubled", "w_then"}, {"then_out"});
  SetTensorType(then_body->add_output(), "then_out", onnx::TensorProto::FLOAT, {-1});
  onnx::GraphProto* else_body = AddBody(if_node, "else_branch");
  // A body may return an enclosing value directly.
  SetTensorType(else_body->add_output(), "x", onnx::TensorProto::FLOAT, {-1});
  AddNode(model, "Add", "double", {"x", "x"}, {"doubled"});
  AddOutput(model, "y", {-1});
  return model;
}

TEST(SubgraphTest, IfBodiesLoadWithOuterScopeValues) {
  Result<Graph> loaded = testing::Load(IfModel(), "if.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const Graph& graph = *loaded;
  ASSERT_EQ(graph.nodes.size(), 2u);
  // The If reads `doubled` through its body, so it follows its producer.
  EXPECT_EQ(graph.nodes[0].name, "double");
  EXPECT_EQ(graph.nodes[1].name, "branch");

  const Attribute* then_attr = graph.nodes[1].FindAttribute("then_branch");
  ASSERT_NE(then_attr, nullptr);
  EXPECT_EQ(then_attr->type, AttributeType::kGraph);
  ASSERT_NE(then_attr->graph, nullptr);
  const Graph& then_body = *then_attr->graph;
  EXPECT_EQ(then_body.weights, graph.weights);
  EXPECT_EQ(then_body.OpsetFor(""), graph.OpsetFor(""));

  const Value& doubled = then_body.value(*then_body.FindValue("doubled"));
  EXPECT_TRUE(doubled.is_outer_scope);
  EXPECT_FALSE(doubled.producer.valid());
  const Value& w = then_body.value(*then_body.FindValue("w_then"));
  ASSERT_TRUE(w.initializer.has_value());
  EXPECT_FALSE(w.is_outer_scope);
  // The body's initializer lives in the shared store.
  EXPECT_EQ(graph.weights->Get(*w.initializer).dims, std::vector<int64_t>({1}));

  const Graph& else_body = *graph.nodes[1].FindAttribute("else_branch")->graph;
  ASSERT_EQ(else_body.outputs.size(), 1u);
  const Value& x = else_body.value(else_body.outputs[0]);
  EXPECT_EQ(x.name, "x");
  EXPECT_TRUE(x.is_outer_scope);
  // The outer value's type comes along, its symbols declared by name.
  EXPECT_EQ(x.dtype, DataType::kFloat32);
  ASSERT_TRUE(x.shape.has_value());
  ASSERT_EQ(x.shape->size(), 1u);
  EXPECT_EQ(else_body.symbol((*x.shape)[0].symbol()).name, "n");
}

// A body reading an enclosing graph's initializer holds it as a constant of
// its own, the same bytes of the shared store; one a run may override stays
// an outer-scope value.
TEST(SubgraphTest, AnEnclosingConstantIsTheBodysConstant) {
  onnx::ModelProto model = IfModel();
  for (const char* name : {"w_outer", "w_overridable"}) {
    auto* w = model.mutable_graph()->add_initializer();
    w->set_name(name);
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(1);
    w->add_float_data(5.0f);
  }
  AddInput(model, "w_overridable", {1});
  auto* then_body = model.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
  AddNode(then_body, "Mul", "then_scale", {"then_out", "w_outer"}, {"scaled"});
  AddNode(then_body, "Mul", "then_scale_again", {"scaled", "w_overridable"}, {"scaled_again"});
  then_body->mutable_output(0)->set_name("scaled_again");
  Result<Graph> loaded = testing::Load(model, "if.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const Graph& graph = *loaded;
  const Graph& body = *graph.nodes[1].FindAttribute("then_branch")->graph;

  const Value& outer = graph.value(*graph.FindValue("w_outer"));
  const Value& constant = body.value(*body.FindValue("w_outer"));
  EXPECT_TRUE(constant.is_constant());
  EXPECT_FALSE(constant.is_outer_scope);
  ASSERT_TRUE(constant.initializer && outer.initializer);
  EXPECT_EQ(graph.weights->Get(*constant.initializer).bytes.data(),
            graph.weights->Get(*outer.initializer).bytes.data());
  EXPECT_EQ(constant.dtype, DataType::kFloat32);

  const Value& overridable = body.value(*body.FindValue("w_overridable"));
  EXPECT_TRUE(overridable.is_outer_scope);
  EXPECT_FALSE(overridable.initializer.has_value());
}

TEST(SubgraphTest, NestedBodyReadingTheTopGraphThreadsThroughTheMiddle) {
  onnx::ModelProto model = NewModel();
  AddInput(model, "cond", {}, onnx::TensorProto::BOOL);
  AddInput(model, "x");
  auto* outer_if = AddNode(model, "If", "outer", {"cond"}, {"y"});
  onnx::GraphProto* middle = AddBody(outer_if, "then_branch");
  auto* inner_if = AddNode(middle, "If", "inner", {"cond"}, {"m"});
  onnx::GraphProto* innermost = AddBody(inner_if, "then_branch");
  AddNode(innermost, "Neg", "neg", {"x"}, {"i"});
  SetTensorType(innermost->add_output(), "i", onnx::TensorProto::FLOAT, {2});
  onnx::GraphProto* inner_else = AddBody(inner_if, "else_branch");
  SetTensorType(inner_else->add_output(), "x", onnx::TensorProto::FLOAT, {2});
  SetTensorType(middle->add_output(), "m", onnx::TensorProto::FLOAT, {2});
  onnx::GraphProto* outer_else = AddBody(outer_if, "else_branch");
  SetTensorType(outer_else->add_output(), "x", onnx::TensorProto::FLOAT, {2});
  AddOutput(model, "y");
  Result<Graph> loaded = testing::Load(model, "nested.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const Graph& middle_graph = *loaded->nodes[0].FindAttribute("then_branch")->graph;
  std::optional<ValueId> x_in_middle = middle_graph.FindValue("x");
  ASSERT_TRUE(x_in_middle.has_value());
  EXPECT_TRUE(middle_graph.value(*x_in_middle).is_outer_scope);
  std::optional<ValueId> cond_in_middle = middle_graph.FindValue("cond");
  ASSERT_TRUE(cond_in_middle.has_value());
  EXPECT_TRUE(middle_graph.value(*cond_in_middle).is_outer_scope);
}

TEST(SubgraphTest, BodyReadingAnUnknownNameIsAnError) {
  onnx::ModelProto model = IfModel();
  auto* then_body = model.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
  then_body->mutable_node(0)->set_input(0, "nowhere");
  Result<Graph> loaded = testing::Load(model, "if.onnx");
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), ::testing::AllOf(::testing::HasSubstr("if.onnx"),
                                                          ::testing::HasSubstr("'branch' (If)"),
                                                          ::testing::HasSubstr("'then_add' (Add)"),
                                                          ::testing::HasSubstr("'nowhere'")));
}

TEST(SubgraphTest, DebianLoopAndScanModelsCarryBodies) {
  const std::filesystem::path node = "/usr/share/libonnx-testdata/data/node";
  if (!std::filesystem::exists(node)) GTEST_SKIP() << node << " is missing";
  for (const char* name : {"test_loop11", "test_scan9_sum", "test_if", "test_if_seq"}) {
    Result<Graph> graph = LoadModelFromFile(node / name / "model.onnx");
    ASSERT_TRUE(graph.ok()) << graph.status().ToString();
    size_t bodies = 0;
    for (const Node& n : graph->nodes) {
      for (const Attribute& a : n.attributes) {
        if (a.type != AttributeType::kGraph) continue;
        ASSERT_NE(a.graph, nullptr);
        EXPECT_EQ(a.graph->weights, graph->weights);
        EXPECT_FALSE(a.graph->nodes.empty() && a.graph->outputs.empty()) << name;
        ++bodies;
      }
    }
    EXPECT_GE(bodies, 1u) << name;
  }
}

}  // namespace
}  // namespace nxrt::graph
