// Dropout: the ONNX node test cases (inference and, with a fixed seed,
// training), and properties checked here: with training_mode false the output
// is the input; in training every element is either dropped to 0 or scaled by
// 1 / (1 - ratio), about 1 - ratio of them are kept, and a seed repeats its
// mask; a ratio or training_mode of other than one value refused.
#include <gtest/gtest.h>

#include "node_case_runner.hpp"
#include "single_node_session.hpp"
#include "tensor_node_session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;

TEST(CpuEpDropout, NodeCases) {
  ExpectFamilyPasses("dropout", {"Dropout"});
}

std::vector<float> Ramp(size_t count) {
  std::vector<float> x(count);
  for (size_t i = 0; i < count; ++i) x[i] = 1.0f + static_cast<float>(i % 17);
  return x;
}

std::optional<nxrt::Tensor> RunDropout(const std::vector<float>& x, float ratio, bool training,
                                       int64_t seed) {
  return RunSingleNode("Dropout", 13,
                       {Input("x", DataType::kFloat32, {static_cast<int64_t>(x.size())}, x),
                        Input("ratio", DataType::kFloat32, {}, std::vector<float>{ratio}),
                        Input("training_mode", DataType::kBool, {},
                              std::vector<uint8_t>{static_cast<uint8_t>(training)})},
                       {IntAttribute("seed", seed)}, DataType::kFloat32);
}

TEST(CpuEpDropout, InferenceIsTheIdentity) {
  const std::vector<float> x = Ramp(100);
  auto y = RunDropout(x, 0.75f, false, 3);
  ASSERT_TRUE(y.has_value());
  const std::vector<double> v = ValuesAsDouble(*y);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(v[i], x[i]) << i;
}

TEST(CpuEpDropout, TrainingDropsOrScalesEachElement) {
  const std::vector<float> x = Ramp(4000);
  const float ratio = 0.25f;
  auto y = RunDropout(x, ratio, true, 7);
  auto again = RunDropout(x, ratio, true, 7);
  ASSERT_TRUE(y.has_value() && again.has_value());
  const std::vector<double> v = ValuesAsDouble(*y);
  EXPECT_EQ(v, ValuesAsDouble(*again));
  size_t kept = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (v[i] == 0) continue;
    ++kept;
    EXPECT_NEAR(v[i], x[i] / (1.0 - ratio), 1e-5) << i;
  }
  const double kept_fraction = static_cast<double>(kept) / static_cast<double>(x.size());
  EXPECT_NEAR(kept_fraction, 1.0 - ratio, 0.03);
}

// ratio and training_mode are single values; empty ones were read anyway.
TEST(CpuEpDropout, RefusesARatioOrTrainingModeThatIsNotOneValue) {
  TensorNode node;
  node.op = "Dropout";
  node.opset = 13;
  node.inputs = {{"x", Values<float>({3}, {1, 2, 3})}, {"ratio", Values<double>({0}, {})}};
  node.outputs = {DataType::kFloat32};
  ExpectRefused(node, "Dropout: ratio holds 0 values; it is one");
  node.inputs[1].tensor = Values<float>({}, {0.5f});
  node.inputs.push_back(
      {"training_mode", nxrt::Tensor::FromValues<bool>({0}, std::span<const bool>()).value()});
  ExpectRefused(node, "Dropout: training_mode holds 0 values; it is one");
}

}  // namespace
}  // namespace nxrt_test
