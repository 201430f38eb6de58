// Inferring bodies. Bodies read values of their enclosing graph by name
// (outer scope), not through node inputs; a body is inferred with its node,
// so that node must come after the producers of what its bodies read,
// whatever the node order. And a Loop's carried value may change shape from
// trip to trip, so the body must see it with the dims that change symbolic.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "inference_test_graph.hpp"

namespace nxrt::graph {
namespace {

using testing::TestGraph;

// A body whose one node applies `op` to the outer value `outer_name`.
Attribute BodyReading(const std::string& attr_name, const std::string& outer_name, const char* op) {
  auto body = std::make_shared<Graph>();
  Value outer;
  outer.name = outer_name;
  outer.is_outer_scope = true;
  const ValueId x = body->AddValue(std::move(outer));
  Value out;
  out.name = attr_name + "_out";
  const ValueId y = body->AddValue(std::move(out));
  Node n;
  n.op_type = op;
  n.inputs = {x};
  n.outputs = {y};
  body->AddNode(std::move(n));
  body->outputs.push_back(y);
  Attribute a;
  a.name = attr_name;
  a.type = AttributeType::kGraph;
  a.graph = std::move(body);
  return a;
}

TEST(BodyOuterScope, NodeIsInferredAfterTheProducerItsBodyReads) {
  TestGraph t;
  t.Input("cond", {}, DataType::kBool);
  t.Input("x", {"batch", 4});
  // The If comes first in node order; only its bodies read "h".
  t.Op("If", {"cond"}, {"y"},
       {BodyReading("then_branch", "h", "Relu"), BodyReading("else_branch", "h", "Neg")});
  t.Op("Transpose", {"x"}, {"h"});
  ASSERT_TRUE(t.Infer().ok());
  EXPECT_EQ(t.V("y").dtype, DataType::kFloat32);
  EXPECT_EQ(t.ShapeOf("y"), (Shape{Dim::Static(4), t.Sym("batch")}));
}

TEST(BodyOuterScope, ALoopBodyReadingALaterProducerIsInferredAfterIt) {
  TestGraph t;
  t.Input("x", {2, 3});
  auto loop = t.Op("Loop", {"", ""}, {}, {BodyReading("body", "h", "Identity")});
  (void)loop;
  t.Op("Neg", {"x"}, {"h"});
  ASSERT_TRUE(t.Infer().ok());
  const Graph& body = *t.graph.node(NodeId{0}).attributes[0].graph;
  const Value& read = body.value(*body.FindValue("h"));
  EXPECT_EQ(read.dtype, DataType::kFloat32);
  ASSERT_TRUE(read.shape.has_value());
  EXPECT_EQ(*read.shape, (Shape{Dim::Static(2), Dim::Static(3)}));
}

// A Loop body that doubles its carried value along axis 0 each trip: the
// body must not see the initial value's static extent, or every trip after
// the first would contradict it.
TEST(BodyOuterScope, LoopCarriedValueThatGrowsGetsASymbolInTheBody) {
  TestGraph t;
  t.Input("trips", {}, DataType::kInt64);
  t.Input("x", {1, 3});
  auto body = std::make_shared<Graph>();
  auto add = [&](const std::string& name, bool input) {
    Value v;
    v.name = name;
    v.is_graph_input = input;
    const ValueId id = body->AddValue(std::move(v));
    if (input) body->inputs.push_back(id);
    return id;
  };
  add("i", true);
  const ValueId cond_in = add("cond_in", true);
  const ValueId x_in = add("x_in", true);
  const ValueId cond_out = add("cond_out", false);
  const ValueId x_out = add("x_out", false);
  Node identity;
  identity.op_type = "Identity";
  identity.inputs = {cond_in};
  identity.outputs = {cond_out};
  body->AddNode(std::move(identity));
  Node concat;
  concat.op_type = "Concat";
  concat.inputs = {x_in, x_in};
  concat.outputs = {x_out};
  concat.attributes = {testing::IntAttr("axis", 0)};
  body->AddNode(std::move(concat));
  body->outputs = {cond_out, x_out};
  Attribute attr;
  attr.name = "body";
  attr.type = AttributeType::kGraph;
  attr.graph = body;
  t.Op("Loop", {"trips", "", "x"}, {"y"}, {attr});
  ASSERT_TRUE(t.Infer().ok());

  const Shape& in = *body->value(x_in).shape;
  ASSERT_EQ(in.size(), 2u);
  EXPECT_FALSE(in[0].is_static());
  EXPECT_EQ(in[1], Dim::Static(3));
  const Shape& out = *body->value(x_out).shape;
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(out[0].is_static());
  const Shape& y = t.ShapeOf("y");
  ASSERT_EQ(y.size(), 2u);
  EXPECT_FALSE(y[0].is_static());
  EXPECT_EQ(y[1], Dim::Static(3));
}

}  // namespace
}  // namespace nxrt::graph
