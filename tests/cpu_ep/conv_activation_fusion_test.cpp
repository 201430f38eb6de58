// A Conv and the activation that alone reads its result run as one fused
// convolution on the CPU EP, the activation applied before the result is
// stored: com.microsoft FusedConv for ONNX Runtime's activations, pkg.nxrt
// FusedConv for HardSwish and the Swish exporters write as Sigmoid and Mul.
// Each fused form gives the unfused graph's values, for a 3x3 convolution
// (oneDNN's blocked kernel) and a 1x1 one (the pointwise product, with and
// without a bias), and an activation read by anything else stays apart.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "cpu_environment.hpp"
#include "ir_model_builder.hpp"
#include "nxrt/session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::Attribute;
using nxrt::graph::AttributeType;

constexpr int64_t kChannels = 8;
constexpr int64_t kMaps = 16;
constexpr int64_t kSize = 10;

Attribute Floats(const std::string& name, float value) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kFloat;
  a.f = value;
  return a;
}

Attribute Ints(const std::string& name, std::vector<int64_t> values) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kInts;
  a.ints = std::move(values);
  return a;
}

std::vector<float> Wave(size_t count, float scale, float phase) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i) + phase);
  return v;
}

// Conv (kernel k, with B unless `no_bias`) then `activation`; when
// `also_read`, the activation's input is a graph output too, so nothing may
// be fused.
nxrt::graph::Graph ConvThen(const std::string& activation, int64_t k, bool also_read,
                            bool no_bias = false) {
  IrModelBuilder b(17, "conv_activation");
  const auto x = b.Input("x", std::vector<int64_t>{1, kChannels, kSize, kSize});
  const auto w = b.Floats("w", {kMaps, kChannels, k, k},
                          Wave(static_cast<size_t>(kMaps * kChannels * k * k), 0.4f, 0.3f));
  const auto bias = b.Floats("b", {kMaps}, Wave(kMaps, 0.5f, 1.1f));
  std::vector<std::optional<nxrt::graph::ValueId>> conv_inputs = {x, w};
  if (!no_bias) conv_inputs.push_back(bias);
  const auto y = b.Tensor("Conv", conv_inputs, "conv", nxrt::graph::DataType::kFloat32,
                          {Ints("pads", {k / 2, k / 2, k / 2, k / 2})});
  nxrt::graph::ValueId out = y;
  if (activation == "Swish") {
    out = b.Tensor("Mul", {y, b.Tensor("Sigmoid", {y}, "gate")}, "act");
  } else if (activation == "Clip") {
    out = b.Tensor("Clip", {y, b.Floats("low", {}, {0.0f}), b.Floats("high", {}, {6.0f})}, "act");
  } else if (activation == "LeakyRelu") {
    out =
        b.Tensor("LeakyRelu", {y}, "act", nxrt::graph::DataType::kFloat32, {Floats("alpha", 0.1f)});
  } else if (activation == "HardSigmoid") {
    out = b.Tensor("HardSigmoid", {y}, "act", nxrt::graph::DataType::kFloat32,
                   {Floats("alpha", 0.25f), Floats("beta", 0.4f)});
  } else {
    out = b.Tensor(activation, {y}, "act");
  }
  b.Output(out);
  if (also_read) b.Output(y);
  return b.Take();
}

struct Outcome {
  std::vector<std::string> fusions;
  std::vector<float> y;
};

Outcome RunConv(const std::string& activation, int64_t k, bool also_read, bool fuse,
                bool no_bias = false) {
  nxrt::SessionOptions options;
  options.providers = {{"cpu", {{"threads", "1"}}}};
  options.rewrite_graph = fuse;
  auto session =
      nxrt::Session::Create(CpuEnvironment(), ConvThen(activation, k, also_read, no_bias), options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return {};
  std::vector<float> x = Wave(kChannels * kSize * kSize, 3.0f, 0.0f);
  const nxrt::NamedTensor inputs[] = {
      {"x", nxrt::Tensor::Borrow(nxrt::graph::DataType::kFloat32, {1, kChannels, kSize, kSize},
                                 x.data(), x.size() * sizeof(float))}};
  auto outputs = (*session)->Run(inputs, {});
  EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
  if (!outputs.ok()) return {};
  auto values = (*outputs)[0].values<float>();
  return {(*session)->graph_rewrites(), {values.begin(), values.end()}};
}

TEST(ConvActivationFusion, EachActivationRunsInsideTheConvolutionWithTheUnfusedValues) {
  const std::vector<std::pair<std::string, std::string>> forms = {
      {"Relu", "com.microsoft"},        {"LeakyRelu", "com.microsoft"},
      {"Clip", "com.microsoft"},        {"Sigmoid", "com.microsoft"},
      {"HardSigmoid", "com.microsoft"}, {"Tanh", "com.microsoft"},
      {"HardSwish", "pkg.nxrt"},        {"Swish", "pkg.nxrt"}};
  for (const auto& [activation, domain] : forms) {
    for (const int64_t k : {3, 1}) {
      const Outcome fused = RunConv(activation, k, false, true);
      ASSERT_FALSE(fused.fusions.empty()) << activation << " k=" << k;
      const std::string taken = activation == "Swish" ? ", Sigmoid 'gate' and Mul 'act'"
                                                      : " and " + activation + " 'act'";
      EXPECT_EQ(fused.fusions[0],
                "Conv 'conv'" + taken + " fused as " + domain + "::FusedConv on cpu#1");
      const Outcome apart = RunConv(activation, k, false, false);
      EXPECT_TRUE(apart.fusions.empty());
      ASSERT_EQ(fused.y.size(), apart.y.size());
      ASSERT_EQ(fused.y.size(), static_cast<size_t>(kMaps * kSize * kSize));
      size_t shaped = 0;  // values the activation changed
      for (size_t i = 0; i < fused.y.size(); ++i) {
        EXPECT_NEAR(fused.y[i], apart.y[i], 1e-5 * (1 + std::abs(apart.y[i])))
            << activation << " k=" << k << " at " << i;
      }
      const Outcome plain = RunConv("Identity", k, false, false);
      for (size_t i = 0; i < plain.y.size(); ++i)
        shaped += std::abs(plain.y[i] - apart.y[i]) > 1e-3f;
      EXPECT_GT(shaped, plain.y.size() / 4) << activation << ": the activation had work to do";
    }
  }
}

// A 1x1 convolution without B still applies its activation (the pass after
// the product adds a zero bias).
TEST(ConvActivationFusion, APointwiseConvolutionWithoutBiasAppliesItsActivation) {
  for (const std::string activation : {"Relu", "Swish", "HardSwish"}) {
    const Outcome fused = RunConv(activation, 1, false, true, true);
    ASSERT_FALSE(fused.fusions.empty()) << activation;
    const Outcome apart = RunConv(activation, 1, false, false, true);
    ASSERT_EQ(fused.y.size(), static_cast<size_t>(kMaps * kSize * kSize)) << activation;
    ASSERT_EQ(fused.y.size(), apart.y.size());
    for (size_t i = 0; i < fused.y.size(); ++i) {
      EXPECT_NEAR(fused.y[i], apart.y[i], 1e-5 * (1 + std::abs(apart.y[i])))
          << activation << " at " << i;
    }
  }
}

TEST(ConvActivationFusion, AnActivationWhoseInputIsReadElsewhereStaysApart) {
  for (const std::string activation : {"Relu", "HardSwish", "Swish"}) {
    const Outcome outcome = RunConv(activation, 3, true, true);
    ASSERT_EQ(outcome.y.size(), static_cast<size_t>(kMaps * kSize * kSize)) << activation;
    for (const std::string& line : outcome.fusions) {
      EXPECT_EQ(line.find("FusedConv"), std::string::npos) << line;
    }
  }
}

}  // namespace
}  // namespace nxrt_test
