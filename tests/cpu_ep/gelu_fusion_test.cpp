// The exact GELU that torch.onnx's TorchScript exporter spells out in five
// ops (x / sqrt 2 or x * (1 / sqrt 2), Erf, + 1, * x, * 0.5) runs as one
// pkg.nxrt Gelu kernel on the CPU EP, with the values of the five; a chain
// with another constant, or whose gate multiplies something else than x,
// stays apart.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cpu_environment.hpp"
#include "ir_model_builder.hpp"
#include "nxrt/session.hpp"

namespace nxrt_test {
namespace {

enum class Form { kDivide, kMultiply, kHalfFirstOperand, kAddTwo, kGateOfOther };

nxrt::graph::Graph GeluChain(Form form) {
  IrModelBuilder b(17, "gelu");
  const auto x = b.Input("x", std::vector<int64_t>{4, 50});
  const auto other = b.Input("other", std::vector<int64_t>{4, 50});
  const auto scaled =
      form == Form::kMultiply
          ? b.Tensor("Mul", {x, b.Floats("inverse_root_two", {}, {0.70710678f})}, "scaled")
          : b.Tensor("Div", {x, b.Floats("root_two", {}, {1.41421354f})}, "scaled");
  const auto erf = b.Tensor("Erf", {scaled}, "erf");
  const float one = form == Form::kAddTwo ? 2.0f : 1.0f;
  const auto shifted = b.Tensor("Add", {b.Floats("one", {}, {one}), erf}, "shifted");
  const auto gated = b.Tensor("Mul", {form == Form::kGateOfOther ? other : x, shifted}, "gated");
  const auto half = b.Floats("half", {}, {0.5f});
  b.Output(form == Form::kHalfFirstOperand ? b.Tensor("Mul", {half, gated}, "y")
                                           : b.Tensor("Mul", {gated, half}, "y"));
  return b.Take();
}

struct Outcome {
  std::vector<std::string> fusions;
  std::vector<float> y;
};

Outcome RunChain(Form form, bool fuse, std::vector<float>& x, std::vector<float>& other) {
  nxrt::SessionOptions options;
  options.providers = {{"cpu", {{"threads", "1"}}}};
  options.rewrite_graph = fuse;
  auto session = nxrt::Session::Create(CpuEnvironment(), GeluChain(form), options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return {};
  const nxrt::NamedTensor inputs[] = {
      {"x", nxrt::Tensor::Borrow(nxrt::graph::DataType::kFloat32, {4, 50}, x.data(),
                                 x.size() * sizeof(float))},
      {"other", nxrt::Tensor::Borrow(nxrt::graph::DataType::kFloat32, {4, 50}, other.data(),
                                     other.size() * sizeof(float))}};
  auto outputs = (*session)->Run(inputs, {});
  EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
  if (!outputs.ok()) return {};
  auto values = (*outputs)[0].values<float>();
  return {(*session)->graph_rewrites(), {values.begin(), values.end()}};
}

std::vector<float> Ramp(float low, float high) {
  std::vector<float> v(200);
  for (size_t i = 0; i < v.size(); ++i) v[i] = low + (high - low) * static_cast<float>(i) / 199.0f;
  return v;
}

TEST(GeluFusion, TheFiveOpsRunAsOneKernelWithTheirValues) {
  for (const Form form : {Form::kDivide, Form::kMultiply, Form::kHalfFirstOperand}) {
    std::vector<float> x = Ramp(-7.0f, 6.0f);
    std::vector<float> other = Ramp(1.0f, 2.0f);
    const Outcome fused = RunChain(form, true, x, other);
    ASSERT_EQ(fused.fusions.size(), 1u);
    const std::string head = form == Form::kMultiply ? "Mul" : "Div";
    EXPECT_EQ(fused.fusions[0], head +
                                    " 'scaled', Erf 'erf', Add 'shifted', Mul 'gated' and Mul 'y' "
                                    "fused as pkg.nxrt::Gelu on cpu#1");
    const Outcome apart = RunChain(form, false, x, other);
    EXPECT_TRUE(apart.fusions.empty());
    ASSERT_EQ(fused.y.size(), x.size());
    ASSERT_EQ(apart.y.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      const double expected = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
      EXPECT_NEAR(fused.y[i], expected, 1e-6 * (1 + std::abs(expected))) << x[i];
      EXPECT_NEAR(fused.y[i], apart.y[i], 1e-6 * (1 + std::abs(expected))) << x[i];
    }
  }
}

TEST(GeluFusion, AnotherConstantOrAGateOfAnotherOperandStaysApart) {
  for (const Form form : {Form::kAddTwo, Form::kGateOfOther}) {
    std::vector<float> x = Ramp(-3.0f, 3.0f);
    std::vector<float> other = Ramp(1.0f, 2.0f);
    const Outcome outcome = RunChain(form, true, x, other);
    ASSERT_EQ(outcome.y.size(), x.size());
    for (const std::string& line : outcome.fusions) {
      EXPECT_EQ(line.find("Gelu"), std::string::npos) << line;
    }
  }
}

}  // namespace
}  // namespace nxrt_test
