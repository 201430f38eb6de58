// The ai.onnx.ml ops (LabelEncoder, TreeEnsemble, ArrayFeatureExtractor,
// Binarizer) against results worked out by hand: key matching of NaN and
// -0.0, defaults, tensor-valued attributes, every aggregate of a two-tree
// ensemble with a missing value, and the decline of an unimplemented post
// transform. The corpus has no ai.onnx.ml case; the exported onnx node cases
// run in the conformance suite.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "single_node_session.hpp"
#include "tensor_node_session.hpp"

namespace nxrt_test {
namespace {

using nxrt::Tensor;
using nxrt::graph::DataType;

constexpr const char* kMl = "ai.onnx.ml";

std::vector<Tensor> RunMl(TensorNode node) {
  const std::string op = node.op;
  auto result = RunTensorNode(std::move(node));
  if (!result.ok()) {
    ADD_FAILURE() << op << ": " << result.status().ToString();
    return {};
  }
  return std::move(result).value();
}

template <typename T>
std::vector<T> Flat(const Tensor& t) {
  const auto v = t.values<T>();
  return std::vector<T>(v.begin(), v.end());
}

TEST(CpuEpMl, LabelEncoderMapsIntsToStringsWithDefault) {
  auto out = RunMl({.op = "LabelEncoder",
                    .domain = kMl,
                    .opset = 2,
                    .inputs = {{"x", Values<int64_t>({3}, {-3, 0, 7})}},
                    .outputs = {DataType::kString},
                    .attributes = {IntsAttribute("keys_int64s", {7, -3}),
                                   StringsAttribute("values_strings", {"seven", "minus three"}),
                                   StringAttribute("default_string", "none")}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].strings(), (std::vector<std::string>{"minus three", "none", "seven"}));
}

TEST(CpuEpMl, LabelEncoderMatchesNanAndSignedZero) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = RunMl({.op = "LabelEncoder",
                    .domain = kMl,
                    .opset = 2,
                    .inputs = {{"x", Values<float>({4}, {-0.0f, -nan, 2.0f, 1.5f})}},
                    .outputs = {DataType::kInt64},
                    .attributes = {FloatsAttribute("keys_floats", {nan, 0.0f, 1.5f}),
                                   IntsAttribute("values_int64s", {10, 20, 30})}});
  ASSERT_EQ(out.size(), 1u);
  // 2.0 is no key: the int64 default, -1.
  EXPECT_EQ(Flat<int64_t>(out[0]), (std::vector<int64_t>{20, 10, -1, 30}));
}

TEST(CpuEpMl, LabelEncoderReadsTensorAttributes) {
  auto out = RunMl({.op = "LabelEncoder",
                    .domain = kMl,
                    .opset = 4,
                    .inputs = {{"x", Strings({2}, {"y", "z"})}},
                    .outputs = {DataType::kFloat64},
                    .tensor_attributes = {{"keys_tensor", Strings({2}, {"x", "y"})},
                                          {"values_tensor", Values<double>({2}, {0.25, -1.0})},
                                          {"default_tensor", Values<double>({1}, {9.0})}}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Flat<double>(out[0]), (std::vector<double>{-1.0, 9.0}));
}

// Two one-node trees over two features, each branch ending in a leaf:
// tree 0 splits x0 < 2 (true: target 0 += 4, false: target 1 += 2); tree 1
// splits x1 >= 0, NaN counting as true (true: target 0 += 2, false: target 0
// += -6).
TensorNode TwoTrees(int64_t aggregate, int64_t post_transform) {
  return {.op = "TreeEnsemble",
          .domain = kMl,
          .opset = 5,
          .inputs = {{"x", Values<float>(
                               {3, 2}, {1, 5, 3, -1, 2, std::numeric_limits<float>::quiet_NaN()})}},
          .outputs = {DataType::kFloat32},
          .attributes = {IntAttribute("aggregate_function", aggregate),
                         IntAttribute("post_transform", post_transform),
                         IntAttribute("n_targets", 2), IntsAttribute("nodes_featureids", {0, 1}),
                         IntsAttribute("nodes_truenodeids", {0, 2}),
                         IntsAttribute("nodes_trueleafs", {1, 1}),
                         IntsAttribute("nodes_falsenodeids", {1, 3}),
                         IntsAttribute("nodes_falseleafs", {1, 1}),
                         IntsAttribute("nodes_missing_value_tracks_true", {0, 1}),
                         IntsAttribute("tree_roots", {0, 1}),
                         IntsAttribute("leaf_targetids", {0, 1, 0, 0})},
          .tensor_attributes = {{"nodes_modes", Values<uint8_t>({2}, {1, 2})},
                                {"nodes_splits", Values<float>({2}, {2.0f, 0.0f})},
                                {"leaf_weights", Values<float>({4}, {4, 2, 2, -6})}}};
}

TEST(CpuEpMl, TreeEnsembleAggregates) {
  struct Case {
    int64_t aggregate;
    std::vector<float> expected;
  };
  const std::vector<Case> cases{
      {1, {6, 0, -6, 2, 2, 2}},  // SUM
      {0, {3, 0, -3, 1, 1, 1}},  // AVERAGE over the two trees
      {3, {4, 0, -6, 2, 2, 2}},  // MAX per target; untouched targets stay 0
      {2, {2, 0, -6, 2, 2, 2}},  // MIN
  };
  for (const Case& c : cases) {
    auto out = RunMl(TwoTrees(c.aggregate, 0));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(Flat<float>(out[0]), c.expected) << "aggregate_function " << c.aggregate;
  }
}

TEST(CpuEpMl, TreeEnsembleLogistic) {
  auto out = RunMl(TwoTrees(1, 2));
  ASSERT_EQ(out.size(), 1u);
  const std::vector<float> sums{6, 0, -6, 2, 2, 2};
  const std::vector<float> y = Flat<float>(out[0]);
  ASSERT_EQ(y.size(), sums.size());
  for (size_t i = 0; i < y.size(); ++i) {
    EXPECT_NEAR(y[i], 1.0 / (1.0 + std::exp(-sums[i])), 1e-6) << i;
  }
}

TEST(CpuEpMl, TreeEnsembleDeclinesProbit) {
  auto result = RunTensorNode(TwoTrees(1, 4));
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("post_transform 4"), std::string::npos)
      << result.status().ToString();
}

TEST(CpuEpMl, ArrayFeatureExtractorPicksLastAxis) {
  auto strings =
      RunMl({.op = "ArrayFeatureExtractor",
             .domain = kMl,
             .opset = 1,
             .inputs = {{"x", Strings({3}, {"a", "b", "c"})}, {"y", Values<int64_t>({2}, {2, 0})}},
             .outputs = {DataType::kString}});
  ASSERT_EQ(strings.size(), 1u);
  EXPECT_EQ(strings[0].shape(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(strings[0].strings(), (std::vector<std::string>{"c", "a"}));

  auto ints = RunMl({.op = "ArrayFeatureExtractor",
                     .domain = kMl,
                     .opset = 1,
                     .inputs = {{"x", Values<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6})},
                                {"y", Values<int64_t>({1}, {1})}},
                     .outputs = {DataType::kInt64}});
  ASSERT_EQ(ints.size(), 1u);
  EXPECT_EQ(ints[0].shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(Flat<int64_t>(ints[0]), (std::vector<int64_t>{2, 5}));
}

TEST(CpuEpMl, BinarizerIsStrictlyGreater) {
  auto out = RunMl({.op = "Binarizer",
                    .domain = kMl,
                    .opset = 1,
                    .inputs = {{"x", Values<float>({3}, {0.5f, 0.6f, -1.0f})}},
                    .outputs = {DataType::kFloat32},
                    .attributes = {FloatAttribute("threshold", 0.5f)}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Flat<float>(out[0]), (std::vector<float>{0, 1, 0}));
}

}  // namespace
}  // namespace nxrt_test
