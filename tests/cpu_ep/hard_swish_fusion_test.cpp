// The hard-swish that exporters spell as Add(x, 3), Clip(0, 6), Mul(x, .)
// and Div(., 6) runs as one pkg.nxrt HardSwish kernel on the CPU EP, with the
// chain's values; chains that mean something else stay apart.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cpu_environment.hpp"
#include "ir_model_builder.hpp"
#include "nxrt/session.hpp"

namespace nxrt_test {
namespace {

struct Chain {
  float add = 3, low = 0, high = 6, divisor = 6;
  bool mul_reads_x = true;
};

nxrt::graph::Graph HardSwishChain(const Chain& c) {
  IrModelBuilder b(13, "hard_swish");
  const auto x = b.Input("x", std::vector<int64_t>{2, 3, 4, 5});
  const auto three = b.Floats("three", {}, {c.add});
  const auto low = b.Floats("low", {}, {c.low});
  const auto high = b.Floats("high", {}, {c.high});
  const auto six = b.Floats("six", {}, {c.divisor});
  const auto shifted = b.Tensor("Add", {three, x}, "shifted");
  const auto clipped = b.Tensor("Clip", {shifted, low, high}, "clipped");
  const auto scaled = b.Tensor("Mul", {c.mul_reads_x ? x : shifted, clipped}, "scaled");
  b.Output(b.Tensor("Div", {scaled, six}, "y"));
  return b.Take();
}

// The session's fusions and its output for x = a ramp over [-5, 5].
std::pair<std::vector<std::string>, std::vector<float>> RunChain(const Chain& c,
                                                                 std::vector<float>& x) {
  nxrt::SessionOptions options;
  options.providers = {{"cpu", {{"threads", "1"}}}};
  auto session = nxrt::Session::Create(CpuEnvironment(), HardSwishChain(c), options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return {};
  const nxrt::NamedTensor inputs[] = {
      {"x", nxrt::Tensor::Borrow(nxrt::graph::DataType::kFloat32, {2, 3, 4, 5}, x.data(),
                                 x.size() * sizeof(float))}};
  auto outputs = (*session)->Run(inputs, {});
  EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
  if (!outputs.ok()) return {};
  auto values = (*outputs)[0].values<float>();
  return {(*session)->graph_rewrites(), {values.begin(), values.end()}};
}

std::vector<float> Ramp() {
  std::vector<float> x(120);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -5.0f + 10.0f * static_cast<float>(i) / 119.0f;
  return x;
}

TEST(HardSwishFusion, TheFourOpsRunAsOneKernelWithTheirValues) {
  std::vector<float> x = Ramp();
  const auto [fusions, y] = RunChain(Chain{}, x);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(fusions[0],
            "Add 'shifted', Clip 'clipped', Mul 'scaled' and Div 'y' fused as "
            "pkg.nxrt::HardSwish on cpu#1");
  ASSERT_EQ(y.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double expected = x[i] * std::clamp(x[i] + 3.0, 0.0, 6.0) / 6.0;
    EXPECT_NEAR(y[i], expected, 1e-6 * (1 + std::abs(expected))) << x[i];
  }
}

TEST(HardSwishFusion, ChainsOfOtherConstantsOrOperandsStayApart) {
  const Chain others[] = {{.add = 2}, {.high = 5}, {.divisor = 5}, {.mul_reads_x = false}};
  for (const Chain& c : others) {
    std::vector<float> x = Ramp();
    const auto [fusions, y] = RunChain(c, x);
    EXPECT_TRUE(fusions.empty()) << fusions.front();
    ASSERT_EQ(y.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const double shifted = x[i] + c.add;
      const double expected = (c.mul_reads_x ? x[i] : shifted) *
                              std::clamp(shifted, double{c.low}, double{c.high}) / c.divisor;
      EXPECT_NEAR(y[i], expected, 1e-5 * (1 + std::abs(expected))) << x[i];
    }
  }
}

}  // namespace
}  // namespace nxrt_test
