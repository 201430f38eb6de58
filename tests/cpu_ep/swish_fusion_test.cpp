// The swish that decoder exports spell as Sigmoid(x) and Mul(x, .) runs as
// one pkg.nxrt Swish kernel on the CPU EP, with the bits of the two ops;
// a Mul of anything else, or a sigmoid read twice, stays apart.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "cpu_environment.hpp"
#include "ir_model_builder.hpp"
#include "nxrt/session.hpp"

namespace nxrt_test {
namespace {

enum class Form { kGateSecond, kGateFirst, kOtherOperand, kGateAlsoAnOutput };

nxrt::graph::Graph SwishChain(Form form) {
  IrModelBuilder b(13, "swish");
  const auto x = b.Input("x", std::vector<int64_t>{3, 40});
  const auto other = b.Input("other", std::vector<int64_t>{3, 40});
  const auto gate = b.Tensor("Sigmoid", {x}, "gate");
  const auto left = form == Form::kGateFirst ? gate : (form == Form::kOtherOperand ? other : x);
  const auto right = form == Form::kGateFirst ? x : gate;
  b.Output(b.Tensor("Mul", {left, right}, "y"));
  if (form == Form::kGateAlsoAnOutput) b.Output(gate);
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
  auto session = nxrt::Session::Create(CpuEnvironment(), SwishChain(form), options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return {};
  const nxrt::NamedTensor inputs[] = {
      {"x", nxrt::Tensor::Borrow(nxrt::graph::DataType::kFloat32, {3, 40}, x.data(),
                                 x.size() * sizeof(float))},
      {"other", nxrt::Tensor::Borrow(nxrt::graph::DataType::kFloat32, {3, 40}, other.data(),
                                     other.size() * sizeof(float))}};
  auto outputs = (*session)->Run(inputs, {});
  EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
  if (!outputs.ok()) return {};
  auto values = (*outputs)[0].values<float>();
  return {(*session)->graph_rewrites(), {values.begin(), values.end()}};
}

std::vector<float> Ramp(float low, float high) {
  std::vector<float> v(120);
  for (size_t i = 0; i < v.size(); ++i) v[i] = low + (high - low) * static_cast<float>(i) / 119.0f;
  return v;
}

TEST(SwishFusion, SigmoidAndMulRunAsOneKernelWithTheBitsOfTheTwo) {
  for (Form form : {Form::kGateSecond, Form::kGateFirst}) {
    std::vector<float> x = Ramp(-12.0f, 9.0f);
    std::vector<float> other = Ramp(1.0f, 2.0f);
    const Outcome fused = RunChain(form, true, x, other);
    ASSERT_EQ(fused.fusions.size(), 1u);
    EXPECT_EQ(fused.fusions[0], "Sigmoid 'gate' and Mul 'y' fused as pkg.nxrt::Swish on cpu#1");
    const Outcome apart = RunChain(form, false, x, other);
    EXPECT_TRUE(apart.fusions.empty());
    EXPECT_EQ(fused.y, apart.y);
    ASSERT_EQ(fused.y.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const double expected = x[i] / (1.0 + std::exp(-static_cast<double>(x[i])));
      EXPECT_NEAR(fused.y[i], expected, 1e-6 * (1 + std::abs(expected))) << x[i];
    }
  }
}

TEST(SwishFusion, AMulOfAnotherOperandOrASigmoidReadElsewhereStaysApart) {
  for (Form form : {Form::kOtherOperand, Form::kGateAlsoAnOutput}) {
    std::vector<float> x = Ramp(-3.0f, 3.0f);
    std::vector<float> other = Ramp(1.0f, 2.0f);
    const Outcome outcome = RunChain(form, true, x, other);
    EXPECT_TRUE(outcome.fusions.empty()) << outcome.fusions.front();
    ASSERT_EQ(outcome.y.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const double gate = 1.0 / (1.0 + std::exp(-static_cast<double>(x[i])));
      const double expected = (form == Form::kOtherOperand ? other[i] : x[i]) * gate;
      EXPECT_NEAR(outcome.y[i], expected, 1e-6 * (1 + std::abs(expected))) << x[i];
    }
  }
}

}  // namespace
}  // namespace nxrt_test
