// CausalConvWithState: a direct causal depthwise convolution computed here
// (bias, SiLU), and the decode property the state exists for: the sequence
// run in two calls, the second given the first's last k - 1 inputs as past
// state, gives the output of one call over the whole sequence; and a bias of
// the wrong length refused.
#include <gtest/gtest.h>

#include <cmath>

#include "single_node_session.hpp"
#include "tensor_node_session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;

constexpr int64_t kBatch = 2, kChannels = 3, kLength = 7, kK = 4;

std::vector<float> Series(size_t count, double step) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = static_cast<float>(std::cos(step * i) * 1.5);
  return v;
}

std::optional<nxrt::Tensor> RunCausalConv(const std::vector<float>& x, int64_t length,
                                          const std::vector<float>& w,
                                          const std::vector<float>& bias,
                                          const std::vector<float>* past) {
  return RunSingleNode("CausalConvWithState", 27,
                       {Input("x", DataType::kFloat32, {kBatch, kChannels, length}, x),
                        Input("w", DataType::kFloat32, {kChannels, 1, kK}, w),
                        Input("bias", DataType::kFloat32, {kChannels}, bias),
                        past ? Input("past", DataType::kFloat32, {kBatch, kChannels, kK - 1}, *past)
                             : AbsentInput()},
                       {StringAttribute("activation", "silu")}, DataType::kFloat32);
}

TEST(CpuEpCausalConv, MatchesADirectConvolutionAndCarriesItsState) {
  const std::vector<float> x = Series(kBatch * kChannels * kLength, 0.9);
  const std::vector<float> w = Series(kChannels * kK, 2.3);
  const std::vector<float> bias{0.1f, -0.2f, 0.3f};
  auto whole = RunCausalConv(x, kLength, w, bias, nullptr);
  ASSERT_TRUE(whole.has_value());
  const std::vector<double> y = ValuesAsDouble(*whole);
  for (int64_t r = 0; r < kBatch * kChannels; ++r) {
    const int64_t c = r % kChannels;
    for (int64_t t = 0; t < kLength; ++t) {
      double v = bias[c];
      for (int64_t j = 0; j < kK; ++j) {
        const int64_t s = t - (kK - 1) + j;  // before 0: the zero past
        if (s >= 0) v += w[c * kK + j] * x[r * kLength + s];
      }
      EXPECT_NEAR(y[r * kLength + t], v / (1 + std::exp(-v)), 1e-5) << r << "," << t;
    }
  }
  // Split after 5 steps.
  const int64_t first = 5, second = kLength - first;
  std::vector<float> head, tail, past;
  for (int64_t r = 0; r < kBatch * kChannels; ++r) {
    for (int64_t t = 0; t < kLength; ++t) (t < first ? head : tail).push_back(x[r * kLength + t]);
    for (int64_t t = first - (kK - 1); t < first; ++t) past.push_back(x[r * kLength + t]);
  }
  auto rest = RunCausalConv(tail, second, w, bias, &past);
  ASSERT_TRUE(rest.has_value());
  const std::vector<double> z = ValuesAsDouble(*rest);
  for (int64_t r = 0; r < kBatch * kChannels; ++r) {
    for (int64_t t = 0; t < second; ++t) {
      EXPECT_NEAR(z[r * second + t], y[r * kLength + first + t], 1e-6) << r << "," << t;
    }
  }
}

// A bias holds one value per channel; one value was read for three.
TEST(CpuEpCausalConv, RefusesABiasOfAnotherLengthThanTheChannels) {
  TensorNode node;
  node.op = "CausalConvWithState";
  node.opset = 27;
  node.inputs = {
      {"x", Values<float>({kBatch, kChannels, kLength}, Series(kBatch * kChannels * kLength, 0.3))},
      {"w", Values<float>({kChannels, 1, kK}, Series(kChannels * kK, 0.7))},
      {"bias", Values<float>({1}, {0.5f})}};
  node.outputs = {DataType::kFloat32};
  ExpectRefused(node, "CausalConvWithState: bias holds 1 values for 3 channels");
}

}  // namespace
}  // namespace nxrt_test
