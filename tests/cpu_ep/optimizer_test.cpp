// The optimizer steps of ai.onnx.preview.training beyond the conformance
// cases (which all start at T = 0): several steps with the state fed back,
// Adam's bias correction and final decay at T > 0, Nesterov momentum in
// double, and the errors for tensors that do not match and attributes that
// are missing.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tensor_node_session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;

constexpr const char* kTraining = "ai.onnx.preview.training";

TEST(CpuEpOptimizer, AdamStepsCorrectTheirMomentsAndDecayTheResult) {
  const double r = 0.05, alpha = 0.8, beta = 0.9, epsilon = 1e-3, norm = 0.01, post = 0.02;
  std::vector<float> x = {1.0f, -2.0f, 0.5f};
  std::vector<float> v = {0.0f, 0.1f, -0.2f};
  std::vector<float> h = {0.0f, 0.3f, 0.1f};
  const std::vector<float> g = {0.4f, -1.5f, 2.0f};
  for (int64_t t = 1; t <= 3; ++t) {
    auto outputs = RunTensorNode(
        {.op = "Adam",
         .domain = kTraining,
         .opset = 1,
         .inputs = {{"R", Values<float>({}, {static_cast<float>(r)})},
                    {"T", Values<int64_t>({}, {t})},
                    {"X", Values<float>({3}, x)},
                    {"G", Values<float>({3}, g)},
                    {"V", Values<float>({3}, v)},
                    {"H", Values<float>({3}, h)}},
         .outputs = {DataType::kFloat32, DataType::kFloat32, DataType::kFloat32},
         .attributes = {FloatAttribute("alpha", static_cast<float>(alpha)),
                        FloatAttribute("beta", static_cast<float>(beta)),
                        FloatAttribute("epsilon", static_cast<float>(epsilon)),
                        FloatAttribute("norm_coefficient", static_cast<float>(norm)),
                        FloatAttribute("norm_coefficient_post", static_cast<float>(post))}});
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    const double a = static_cast<float>(alpha), b = static_cast<float>(beta);
    const double rate = r * std::sqrt(1 - std::pow(b, t)) / (1 - std::pow(a, t));
    for (size_t i = 0; i < x.size(); ++i) {
      const double gr = static_cast<float>(norm) * x[i] + g[i];
      const double v_new = a * v[i] + (1 - a) * gr;
      const double h_new = b * h[i] + (1 - b) * gr * gr;
      const double x_new = (1 - static_cast<float>(post)) *
                           (x[i] - rate * v_new / (std::sqrt(h_new) + static_cast<float>(epsilon)));
      EXPECT_NEAR((*outputs)[0].values<float>()[i], x_new, 1e-6) << "step " << t;
      EXPECT_NEAR((*outputs)[1].values<float>()[i], v_new, 1e-6) << "step " << t;
      EXPECT_NEAR((*outputs)[2].values<float>()[i], h_new, 1e-6) << "step " << t;
      x[i] = (*outputs)[0].values<float>()[i];
      v[i] = (*outputs)[1].values<float>()[i];
      h[i] = (*outputs)[2].values<float>()[i];
    }
  }
}

TEST(CpuEpOptimizer, NesterovMomentumInDoubleTakesTheWholeGradientFirst) {
  // The attributes are float32: the kernel sees 0.9 as 0.9f.
  const double r = 0.1, alpha = 0.9f, beta = 0.5f, norm = 0.0f;
  std::vector<double> x = {3.0, -1.0};
  std::vector<double> v = {0.0, 0.0};
  const std::vector<double> g = {1.0, -2.0};
  for (int64_t t = 0; t < 3; ++t) {
    auto outputs =
        RunTensorNode({.op = "Momentum",
                       .domain = kTraining,
                       .opset = 1,
                       .inputs = {{"R", Values<double>({}, {r})},
                                  {"T", Values<int64_t>({}, {t})},
                                  {"X", Values<double>({2}, x)},
                                  {"G", Values<double>({2}, g)},
                                  {"V", Values<double>({2}, v)}},
                       .outputs = {DataType::kFloat64, DataType::kFloat64},
                       .attributes = {FloatAttribute("alpha", alpha), FloatAttribute("beta", beta),
                                      FloatAttribute("norm_coefficient", norm),
                                      StringAttribute("mode", "nesterov")}});
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    for (size_t i = 0; i < x.size(); ++i) {
      const double v_new = alpha * v[i] + (t > 0 ? beta : 1.0) * g[i];
      const double x_new = x[i] - r * (g[i] + alpha * v_new);
      EXPECT_DOUBLE_EQ((*outputs)[0].values<double>()[i], x_new) << "step " << t;
      EXPECT_DOUBLE_EQ((*outputs)[1].values<double>()[i], v_new) << "step " << t;
      x[i] = x_new;
      v[i] = v_new;
    }
  }
}

TEST(CpuEpOptimizer, AGradientOfAnotherShapeIsRefusedNamingTheInput) {
  auto outputs = RunTensorNode({.op = "Adagrad",
                                .domain = kTraining,
                                .opset = 1,
                                .inputs = {{"R", Values<float>({}, {0.1f})},
                                           {"T", Values<int64_t>({}, {0})},
                                           {"X", Values<float>({2}, {1.0f, 2.0f})},
                                           {"G", Values<float>({3}, {1.0f, 2.0f, 3.0f})},
                                           {"H", Values<float>({2}, {0.0f, 0.0f})}},
                                .outputs = {DataType::kFloat32, DataType::kFloat32}});
  ASSERT_FALSE(outputs.ok());
  EXPECT_NE(outputs.status().message().find("Adagrad: input 3 is [3] but its X is [2]"),
            std::string::npos)
      << outputs.status().ToString();
}

TEST(CpuEpOptimizer, MomentumWithoutItsRequiredAttributesIsDeclined) {
  auto outputs = RunTensorNode({.op = "Momentum",
                                .domain = kTraining,
                                .opset = 1,
                                .inputs = {{"R", Values<float>({}, {0.1f})},
                                           {"T", Values<int64_t>({}, {0})},
                                           {"X", Values<float>({1}, {1.0f})},
                                           {"G", Values<float>({1}, {1.0f})},
                                           {"V", Values<float>({1}, {0.0f})}},
                                .outputs = {DataType::kFloat32, DataType::kFloat32},
                                .attributes = {FloatAttribute("beta", 0.5f)}});
  ASSERT_FALSE(outputs.ok());
  EXPECT_NE(outputs.status().message().find("Momentum: attribute 'alpha' is required"),
            std::string::npos)
      << outputs.status().ToString();
}

}  // namespace
}  // namespace nxrt_test
