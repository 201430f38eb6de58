// FoldBatchNormalizationIntoConv: the folded weights and bias against the
// definition, and every condition that must keep the two nodes apart.
#include <gtest/gtest.h>

#include <cmath>
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

constexpr int64_t kMaps = 3;

void AddFloats(onnx::ModelProto& model, const std::string& name, std::vector<int64_t> dims,
               const std::vector<float>& values) {
  auto* t = model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}

const std::vector<float> kWeights{1, 2, 3, 4, -1, -2, -3, -4, 0.5f, 0.25f, 2, 8};  // 3x1x2x2
const std::vector<float> kBias{0.1f, -0.2f, 0.3f};
const std::vector<float> kScale{2, 0.5f, -1};
const std::vector<float> kShift{1, 0, -1};
const std::vector<float> kMean{0.5f, -0.5f, 2};
const std::vector<float> kVar{4, 0.25f, 1};

// x -> Conv(w, b) -> c -> BatchNormalization -> y, every parameter an
// initializer; tests then break one condition of the fold.
onnx::ModelProto ConvBatchNorm(bool conv_bias = true) {
  onnx::ModelProto model = NewModel(15);
  AddInput(model, "x", {1, 1, 4, 4});
  AddOutput(model, "y", {1, kMaps, 3, 3});
  AddFloats(model, "w", {kMaps, 1, 2, 2}, kWeights);
  if (conv_bias) AddFloats(model, "b", {kMaps}, kBias);
  AddFloats(model, "scale", {kMaps}, kScale);
  AddFloats(model, "shift", {kMaps}, kShift);
  AddFloats(model, "mean", {kMaps}, kMean);
  AddFloats(model, "var", {kMaps}, kVar);
  AddNode(model, "Conv", "conv",
          conv_bias ? std::vector<std::string>{"x", "w", "b"} : std::vector<std::string>{"x", "w"},
          {"c"});
  auto* bn =
      AddNode(model, "BatchNormalization", "bn", {"c", "scale", "shift", "mean", "var"}, {"y"});
  auto* epsilon = bn->add_attribute();
  epsilon->set_name("epsilon");
  epsilon->set_type(onnx::AttributeProto::FLOAT);
  epsilon->set_f(0.01f);
  return model;
}

std::vector<float> Floats(const Graph& graph, ValueId id) {
  const TensorData& data = graph.weights->Get(*graph.value(id).initializer);
  std::vector<float> values(data.bytes.size() / sizeof(float));
  std::memcpy(values.data(), data.bytes.data(), data.bytes.size());
  return values;
}

size_t CountOp(const Graph& graph, const std::string& op) {
  size_t n = 0;
  for (const Node& node : graph.nodes) n += node.op_type == op;
  return n;
}

TEST(FoldBatchNormalization, ConvTakesTheScaledWeightsAndShiftedBias) {
  for (const bool conv_bias : {true, false}) {
    Graph graph = Load(ConvBatchNorm(conv_bias)).value();
    const std::vector<std::string> changes = FoldBatchNormalizationIntoConv(graph);
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_EQ(changes[0], "BatchNormalization 'bn' folded into Conv 'conv'");
    ASSERT_EQ(graph.nodes.size(), 1u);
    const Node& conv = graph.nodes[0];
    ASSERT_EQ(conv.op_type, "Conv");
    ASSERT_EQ(conv.inputs.size(), 3u);
    EXPECT_EQ(graph.value(*conv.outputs[0]).name, "y");
    EXPECT_EQ(graph.value(*conv.outputs[0]).producer.index, 0u);
    const std::vector<float> w = Floats(graph, *conv.inputs[1]);
    const std::vector<float> b = Floats(graph, *conv.inputs[2]);
    ASSERT_EQ(w.size(), kWeights.size());
    ASSERT_EQ(b.size(), static_cast<size_t>(kMaps));
    for (int64_t m = 0; m < kMaps; ++m) {
      const double s = kScale[m] / std::sqrt(static_cast<double>(kVar[m]) + 0.01f);
      for (size_t k = 0; k < 4; ++k) {
        EXPECT_FLOAT_EQ(w[m * 4 + k], static_cast<float>(kWeights[m * 4 + k] * s));
      }
      const double bias = conv_bias ? kBias[m] : 0.0;
      EXPECT_FLOAT_EQ(b[m], static_cast<float>((bias - kMean[m]) * s + kShift[m]));
    }
    // The original weights are untouched for any other reader.
    EXPECT_EQ(Floats(graph, *graph.FindValue("w")), kWeights);
  }
}

TEST(FoldBatchNormalization, ConvOutputReadElsewhereIsKept) {
  onnx::ModelProto model = ConvBatchNorm();
  AddOutput(model, "c", {1, kMaps, 3, 3});
  Graph as_output = Load(model).value();
  EXPECT_TRUE(FoldBatchNormalizationIntoConv(as_output).empty());
  EXPECT_EQ(CountOp(as_output, "BatchNormalization"), 1u);

  model = ConvBatchNorm();
  AddNode(model, "Relu", "other", {"c"}, {"r"});
  AddOutput(model, "r", {1, kMaps, 3, 3});
  Graph read_twice = Load(model).value();
  EXPECT_TRUE(FoldBatchNormalizationIntoConv(read_twice).empty());
}

TEST(FoldBatchNormalization, StatisticsACallerCanFeedAreKept) {
  onnx::ModelProto model = ConvBatchNorm();
  AddInput(model, "mean", {kMaps});  // an initializer that is also an input
  Graph overridable = Load(model).value();
  EXPECT_TRUE(FoldBatchNormalizationIntoConv(overridable).empty());

  model = ConvBatchNorm();
  model.mutable_graph()->mutable_initializer()->RemoveLast();  // var becomes an input
  AddInput(model, "var", {kMaps});
  Graph fed = Load(model).value();
  EXPECT_TRUE(FoldBatchNormalizationIntoConv(fed).empty());
}

TEST(FoldBatchNormalization, TrainingModeAndStatisticsOutputsAreKept) {
  onnx::ModelProto model = ConvBatchNorm();
  auto* training = model.mutable_graph()->mutable_node(1)->add_attribute();
  training->set_name("training_mode");
  training->set_type(onnx::AttributeProto::INT);
  training->set_i(1);
  Graph train = Load(model).value();
  EXPECT_TRUE(FoldBatchNormalizationIntoConv(train).empty());

  model = ConvBatchNorm();
  model.mutable_graph()->mutable_node(1)->add_output("running_mean");
  Graph statistics = Load(model).value();
  EXPECT_TRUE(FoldBatchNormalizationIntoConv(statistics).empty());
}

TEST(FoldBatchNormalization, ASubgraphReadingTheConvOutputKeepsIt) {
  onnx::ModelProto model = ConvBatchNorm();
  AddInput(model, "cond", {}, onnx::TensorProto::BOOL);
  auto* node = AddNode(model, "If", "branch", {"cond"}, {"z"});
  for (const char* name : {"then_branch", "else_branch"}) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* body = a->mutable_g();
    body->set_name(name);
    AddNode(body, "Identity", std::string(name) + "_id", {"c"}, {std::string(name) + "_out"});
    testing::SetTensorType(body->add_output(), std::string(name) + "_out", onnx::TensorProto::FLOAT,
                           {1, kMaps, 3, 3});
  }
  AddOutput(model, "z", {1, kMaps, 3, 3});
  Graph graph = Load(model).value();
  EXPECT_TRUE(FoldBatchNormalizationIntoConv(graph).empty());
}

}  // namespace
}  // namespace nxrt::graph
