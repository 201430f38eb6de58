// Constant folding at load (core/src/session/constant_folding.hpp): nodes
// whose inputs are all constants run once when the session is made and
// their results become initializers, giving the values the unfolded graph
// computes, in the main graph and in If bodies; an initializer a run may
// replace, and a result past the bound, stay as they were.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cpu_environment.hpp"
#include "ir_model_builder.hpp"
#include "nxrt/session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;

struct Outcome {
  std::vector<std::string> rewrites;
  std::vector<float> y;
};

Outcome RunGraph(nxrt::graph::Graph graph, bool rewrite, std::vector<float> x,
                 std::vector<nxrt::NamedTensor> more = {}) {
  nxrt::SessionOptions options;
  options.providers = {{"cpu", {{"threads", "1"}}}};
  options.rewrite_graph = rewrite;
  auto session = nxrt::Session::Create(CpuEnvironment(), std::move(graph), options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return {};
  std::vector<nxrt::NamedTensor> inputs = {
      {"x", nxrt::Tensor::Borrow(DataType::kFloat32, {2, 3}, x.data(), x.size() * sizeof(float))}};
  for (auto& input : more) inputs.push_back(std::move(input));
  auto outputs = (*session)->Run(inputs, {});
  EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
  if (!outputs.ok()) return {};
  auto values = (*outputs)[0].values<float>();
  return {(*session)->graph_rewrites(), {values.begin(), values.end()}};
}

// y = x [2, 3] . Transpose(w [4, 3]) + Concat(Slice(b, 0:2), Slice(b, 2:4)):
// everything but the MatMul with x and the Add is constant.
nxrt::graph::Graph LinearOfFoldedWeights() {
  IrModelBuilder b(17, "folding");
  const auto x = b.Input("x", std::vector<int64_t>{2, 3});
  const auto w = b.Floats("w", {4, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  const auto bias = b.Floats("b", {4}, {0.5f, -1.0f, 2.0f, 0.25f});
  const auto wt = b.Tensor("Transpose", {w}, "wt");
  const auto zero = b.Int64s("zero", {1}, {0});
  const auto two = b.Int64s("two", {1}, {2});
  const auto four = b.Int64s("four", {1}, {4});
  const auto low = b.Tensor("Slice", {bias, zero, two}, "low");
  const auto high = b.Tensor("Slice", {bias, two, four}, "high");
  nxrt::graph::Attribute axis;
  axis.name = "axis";
  axis.type = nxrt::graph::AttributeType::kInt;
  axis.i = 0;
  const auto joined = b.Tensor("Concat", {low, high}, "joined", DataType::kFloat32, {axis});
  const auto product = b.Tensor("MatMul", {x, wt}, "product");
  b.Output(b.Tensor("Add", {product, joined}, "y"));
  return b.Take();
}

TEST(ConstantFolding, NodesOfConstantsRunOnceAtLoadWithTheirValues) {
  const std::vector<float> x = {1, -2, 0.5f, 3, 0, -1};
  const Outcome folded = RunGraph(LinearOfFoldedWeights(), true, x);
  ASSERT_FALSE(folded.rewrites.empty());
  EXPECT_EQ(folded.rewrites[0], "4 nodes of constants folded into initializers at load");
  const Outcome plain = RunGraph(LinearOfFoldedWeights(), false, x);
  EXPECT_TRUE(plain.rewrites.empty());
  ASSERT_EQ(folded.y.size(), 8u);
  EXPECT_EQ(folded.y, plain.y);
  // Row 0 against the first column of w^T: 1 - 4 + 1.5 + 0.5.
  EXPECT_FLOAT_EQ(folded.y[0], -1.0f);
}

// A body that reads an enclosing graph's value, as If(cond) then
// x . Neg(Transpose(w)) else x . Transpose(w) reads wt: wt folds in the main
// graph first, and the body's Neg then folds too.
nxrt::graph::Graph IfOfFoldedWeights() {
  using nxrt::graph::ValueId;
  IrModelBuilder main(17, "if_folding");
  main.Input("x", std::vector<int64_t>{2, 3});
  const auto cond = main.Input("cond", std::vector<int64_t>{}, DataType::kBool);
  const auto w = main.Floats("w", {4, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  main.Tensor("Transpose", {w}, "wt");
  const auto body = [](bool negate) {
    IrModelBuilder b(17, negate ? "then" : "else");
    ValueId outer_x = b.Input("x", std::vector<int64_t>{2, 3});
    ValueId outer_wt = b.Input("wt", std::vector<int64_t>{3, 4});
    const ValueId weights = negate ? b.Tensor("Neg", {outer_wt}, "nwt") : outer_wt;
    b.Output(b.Tensor("MatMul", {outer_x, weights}, negate ? "then_y" : "else_y"));
    nxrt::graph::Graph graph = b.Take();
    graph.inputs.clear();
    for (ValueId id : {outer_x, outer_wt}) {
      graph.value(id).is_graph_input = false;
      graph.value(id).is_outer_scope = true;
    }
    return graph;
  };
  nxrt::graph::Graph then_body = body(true), else_body = body(false);
  nxrt::graph::Graph graph = main.Take();
  then_body.weights = else_body.weights = graph.weights;
  nxrt::graph::Node node;
  node.name = "branch";
  node.op_type = "If";
  node.inputs = {cond};
  node.attributes = {GraphAttr("then_branch", std::move(then_body)),
                     GraphAttr("else_branch", std::move(else_body))};
  nxrt::graph::Value y;
  y.name = "y";
  y.dtype = DataType::kFloat32;
  node.outputs = {graph.AddValue(std::move(y))};
  graph.outputs.push_back(*node.outputs[0]);
  graph.AddNode(std::move(node));
  return graph;
}

TEST(ConstantFolding, BodiesFoldWhatReadsTheEnclosingConstants) {
  const std::vector<float> x = {1, -2, 0.5f, 3, 0, -1};
  bool cond = true;
  const auto inputs = [&] {
    std::vector<nxrt::NamedTensor> more;
    more.push_back({"cond", nxrt::Tensor::Borrow(DataType::kBool, {}, &cond, sizeof(cond))});
    return more;
  };
  const Outcome folded = RunGraph(IfOfFoldedWeights(), true, x, inputs());
  ASSERT_FALSE(folded.rewrites.empty());
  EXPECT_EQ(folded.rewrites[0], "2 nodes of constants folded into initializers at load");
  const Outcome plain = RunGraph(IfOfFoldedWeights(), false, x, inputs());
  ASSERT_EQ(folded.y.size(), 8u);
  EXPECT_EQ(folded.y, plain.y);
  // Row 0 against the first column of -w^T: -(1 - 4 + 1.5).
  EXPECT_FLOAT_EQ(folded.y[0], 1.5f);
}

// An initializer that is also a graph input may be replaced by a run, so
// what reads it is no constant.
TEST(ConstantFolding, AnOverridableInitializerStaysAnInput) {
  IrModelBuilder b(17, "overridable");
  const auto x = b.Input("x", std::vector<int64_t>{2, 3});
  const auto w = b.Floats("w", {3, 2}, {1, 0, 0, 1, 1, 1});
  b.Output(b.Tensor("MatMul", {x, b.Tensor("Identity", {b.Tensor("Neg", {w}, "nw")}, "w2")}, "y"));
  nxrt::graph::Graph graph = b.Take();
  graph.value(w).is_graph_input = true;
  std::vector<float> replacement = {2, 0, 0, 2, 0, 0};
  std::vector<nxrt::NamedTensor> more;
  more.push_back({"w", nxrt::Tensor::Borrow(DataType::kFloat32, {3, 2}, replacement.data(),
                                            replacement.size() * sizeof(float))});
  const Outcome outcome = RunGraph(std::move(graph), true, {1, 2, 3, 4, 5, 6}, std::move(more));
  for (const std::string& line : outcome.rewrites) {
    EXPECT_EQ(line.find("folded"), std::string::npos) << line;
  }
  EXPECT_EQ(outcome.y, (std::vector<float>{-2, -4, -8, -10}));
}

// A ConstantOfShape of 4 GiB stays a node: folding it would pass the bound.
TEST(ConstantFolding, AResultPastTheBoundStaysANode) {
  IrModelBuilder b(17, "vast");
  const auto x = b.Input("x", std::vector<int64_t>{2, 3});
  const auto shape = b.Int64s("shape", {2}, {int64_t{1} << 20, int64_t{1} << 10});
  const auto vast = b.Tensor("ConstantOfShape", {shape}, "vast");
  b.Output(x);
  b.Output(b.Tensor("Shape", {vast}, "vast_shape", DataType::kInt64));
  nxrt::SessionOptions options;
  options.providers = {{"cpu", {{"threads", "1"}}}};
  auto session = nxrt::Session::Create(CpuEnvironment(), b.Take(), options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  for (const std::string& line : (*session)->graph_rewrites()) {
    EXPECT_EQ(line.find("folded"), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace nxrt_test
