// The CPU EP's float Exp, Erf, Sigmoid, Tanh, Gelu, Softmax and LogSoftmax
// against the standard library in double, over inputs that sweep every
// binade the functions care about, the edges of the float range, and the
// special values; and the EP's vector forms against the scalar formulas, bit
// for bit.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "attribute_builders.hpp"
#include "single_node_session.hpp"
#include "vector_math.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;

// Distance in units in the last place of `expected` (as a float).
double Ulps(float got, double expected) {
  const float e = static_cast<float>(expected);
  if (e == 0.0f) return got == 0.0f ? 0.0 : std::numeric_limits<double>::infinity();
  const double ulp =
      std::nextafter(std::fabs(e), std::numeric_limits<float>::infinity()) - std::fabs(e);
  return std::fabs(static_cast<double>(got) - expected) / ulp;
}

// Inputs from -limit to limit: a dense grid plus every power of two, each
// with its neighbours, so all binades and the subnormal-producing edge are
// covered.
std::vector<float> Sweep(float limit) {
  std::vector<float> xs;
  for (int i = -20000; i <= 20000; ++i) xs.push_back(limit * static_cast<float>(i) / 20000.0f);
  for (int e = -30; e <= 7; ++e) {
    for (float sign : {-1.0f, 1.0f}) {
      const float p = sign * std::ldexp(1.0f, e);
      if (std::fabs(p) > limit) continue;
      xs.push_back(p);
      xs.push_back(std::nextafter(p, 0.0f));
      xs.push_back(std::nextafter(p, 2 * p));
    }
  }
  return xs;
}

std::vector<float> RunUnaryOp(const std::string& op, const std::vector<float>& xs,
                              int64_t opset = 17,
                              std::vector<nxrt::graph::Attribute> attributes = {}) {
  auto out = RunSingleNode(op, opset,
                           {Input("x", DataType::kFloat32, {static_cast<int64_t>(xs.size())}, xs)},
                           std::move(attributes), DataType::kFloat32);
  if (!out) return {};
  auto values = out->values<float>();
  return {values.begin(), values.end()};
}

TEST(CpuEpVectorMath, ExpIsWithinTwoUlpsAcrossTheFloatRange) {
  const std::vector<float> xs = Sweep(88.0f);
  const std::vector<float> ys = RunUnaryOp("Exp", xs);
  ASSERT_EQ(ys.size(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    const double expected = std::exp(static_cast<double>(xs[i]));
    if (expected < std::numeric_limits<float>::min()) {
      EXPECT_GE(ys[i], 0.0f) << "exp(" << xs[i] << ")";
      EXPECT_LE(ys[i], std::numeric_limits<float>::min()) << "exp(" << xs[i] << ")";
      continue;
    }
    EXPECT_LE(Ulps(ys[i], expected), 2.0) << "exp(" << xs[i] << ") = " << ys[i];
  }
}

TEST(CpuEpVectorMath, ExpKeepsTheSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> ys =
      RunUnaryOp("Exp", {inf, -inf, std::nanf(""), 89.0f, -104.0f, 0.0f, -0.0f});
  ASSERT_EQ(ys.size(), 7u);
  EXPECT_EQ(ys[0], inf);
  EXPECT_EQ(ys[1], 0.0f);
  EXPECT_TRUE(std::isnan(ys[2]));
  EXPECT_EQ(ys[3], inf);
  EXPECT_EQ(ys[4], 0.0f);
  EXPECT_EQ(ys[5], 1.0f);
  EXPECT_EQ(ys[6], 1.0f);
}

TEST(CpuEpVectorMath, ErfIsAccurateNearZeroAndInTheTails) {
  std::vector<float> xs = Sweep(6.0f);
  const float inf = std::numeric_limits<float>::infinity();
  xs.insert(xs.end(), {inf, -inf, 1e-30f, -1e-30f, 0.0f});
  const std::vector<float> ys = RunUnaryOp("Erf", xs);
  ASSERT_EQ(ys.size(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    const double expected = std::erf(static_cast<double>(xs[i]));
    const double error = std::fabs(ys[i] - expected);
    EXPECT_LE(error, 4e-7) << "erf(" << xs[i] << ") = " << ys[i];
    EXPECT_LE(error, 1e-6 * std::fabs(expected) + 1e-45) << "erf(" << xs[i] << ") = " << ys[i];
  }
  EXPECT_TRUE(std::isnan(RunUnaryOp("Erf", {std::nanf("")}).at(0)));
}

TEST(CpuEpVectorMath, SigmoidIsWithinThreeUlps) {
  const std::vector<float> xs = Sweep(80.0f);
  const std::vector<float> ys = RunUnaryOp("Sigmoid", xs);
  ASSERT_EQ(ys.size(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    const double expected = 1.0 / (1.0 + std::exp(-static_cast<double>(xs[i])));
    if (expected < std::numeric_limits<float>::min()) continue;
    EXPECT_LE(Ulps(ys[i], expected), 3.0) << "sigmoid(" << xs[i] << ") = " << ys[i];
  }
}

// The recurrent ops' float tanh (their default activation with the sigmoid).
TEST(CpuEpVectorMath, TanhFloatIsWithinFiveUlps) {
  for (const float x : Sweep(12.0f)) {
    const double expected = std::tanh(static_cast<double>(x));
    EXPECT_LE(Ulps(nxrt::cpu::TanhFloat(x), expected), 5.0) << "tanh(" << x << ")";
  }
  EXPECT_EQ(nxrt::cpu::TanhFloat(std::numeric_limits<float>::infinity()), 1.0f);
  EXPECT_EQ(nxrt::cpu::TanhFloat(-std::numeric_limits<float>::infinity()), -1.0f);
  EXPECT_TRUE(std::signbit(nxrt::cpu::TanhFloat(-0.0f)));
  EXPECT_TRUE(std::isnan(nxrt::cpu::TanhFloat(std::numeric_limits<float>::quiet_NaN())));
}

// The EP picks a wider-vector form of its loops at load time where the CPU
// has one (isa_clones.hpp). Each must round like the plain scalar formula,
// compiled here for the x86-64 baseline, so these ops give the same bits on
// every machine.
TEST(CpuEpVectorMath, EveryVectorFormGivesTheScalarFormulasBits) {
  const std::vector<float> xs = Sweep(88.0f);
  const std::vector<float> exp = RunUnaryOp("Exp", xs);
  const std::vector<float> erf = RunUnaryOp("Erf", xs);
  const std::vector<float> sigmoid = RunUnaryOp("Sigmoid", xs);
  ASSERT_EQ(exp.size(), xs.size());
  ASSERT_EQ(erf.size(), xs.size());
  ASSERT_EQ(sigmoid.size(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint32_t>(exp[i]), std::bit_cast<uint32_t>(nxrt::cpu::ExpFloat(xs[i])))
        << "exp(" << xs[i] << ")";
    EXPECT_EQ(std::bit_cast<uint32_t>(erf[i]), std::bit_cast<uint32_t>(nxrt::cpu::ErfFloat(xs[i])))
        << "erf(" << xs[i] << ")";
    EXPECT_EQ(std::bit_cast<uint32_t>(sigmoid[i]),
              std::bit_cast<uint32_t>(nxrt::cpu::SigmoidFloat(xs[i])))
        << "sigmoid(" << xs[i] << ")";
  }
}

TEST(CpuEpVectorMath, TanhIsWithinTwoUlps) {
  std::vector<float> xs = Sweep(12.0f);
  const std::vector<float> ys = RunUnaryOp("Tanh", xs);
  ASSERT_EQ(ys.size(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    EXPECT_LE(Ulps(ys[i], std::tanh(static_cast<double>(xs[i]))), 2.0)
        << "tanh(" << xs[i] << ") = " << ys[i];
  }
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> special = RunUnaryOp("Tanh", {inf, -inf, std::nanf("")});
  ASSERT_EQ(special.size(), 3u);
  EXPECT_EQ(special[0], 1.0f);
  EXPECT_EQ(special[1], -1.0f);
  EXPECT_TRUE(std::isnan(special[2]));
}

// Both forms of Gelu: within 1e-6 absolutely everywhere, and within 1e-5
// relatively where |gelu| >= 0.05. Nearer zero on the negative side the
// result is 0.5 x (1 + erf) with erf near -1, a cancellation in float: even a
// correctly rounded erf leaves a relative error of 5e-5 at gelu = -1e-3.
TEST(CpuEpVectorMath, GeluMatchesTheDoubleReference) {
  const std::vector<float> xs = Sweep(10.0f);
  for (const std::string approximate : {"none", "tanh"}) {
    const std::vector<float> ys =
        RunUnaryOp("Gelu", xs, 20, {StringAttribute("approximate", approximate)});
    ASSERT_EQ(ys.size(), xs.size()) << approximate;
    for (size_t i = 0; i < xs.size(); ++i) {
      const double x = xs[i];
      const double expected =
          approximate == "none"
              ? 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)))
              : 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
      const double error = std::fabs(ys[i] - expected);
      EXPECT_LE(error, 1e-6) << approximate << " gelu(" << x << ") = " << ys[i];
      if (std::fabs(expected) >= 0.05) {
        EXPECT_LE(error, 1e-5 * std::fabs(expected))
            << approximate << " gelu(" << x << ") = " << ys[i];
      }
    }
    EXPECT_TRUE(std::isnan(
        RunUnaryOp("Gelu", {std::nanf("")}, 20, {StringAttribute("approximate", approximate)})
            .at(0)));
  }
}

TEST(CpuEpVectorMath, SoftmaxRowsMatchTheDoubleReference) {
  constexpr int64_t kRows = 7;
  constexpr int64_t kCols = 333;
  std::vector<float> xs(kRows * kCols);
  for (size_t i = 0; i < xs.size(); ++i) {
    xs[i] = 40.0f * std::sin(0.37f * static_cast<float>(i)) - static_cast<float>(i % 5);
  }
  auto out = RunSingleNode("Softmax", 13, {Input("x", DataType::kFloat32, {kRows, kCols}, xs)}, {},
                           DataType::kFloat32);
  ASSERT_TRUE(out.has_value());
  auto ys = out->values<float>();
  for (int64_t r = 0; r < kRows; ++r) {
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < kCols; ++c) max = std::max(max, double{xs[r * kCols + c]});
    double sum = 0;
    for (int64_t c = 0; c < kCols; ++c) sum += std::exp(xs[r * kCols + c] - max);
    for (int64_t c = 0; c < kCols; ++c) {
      const double expected = std::exp(xs[r * kCols + c] - max) / sum;
      EXPECT_NEAR(ys[r * kCols + c], expected, 1e-6 * expected + 1e-12)
          << "row " << r << " col " << c;
    }
  }
}

TEST(CpuEpVectorMath, LogSoftmaxAlongAMiddleAxisMatchesTheDoubleReference) {
  constexpr int64_t kOuter = 3, kN = 50, kInner = 4;
  std::vector<float> xs(kOuter * kN * kInner);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 30.0f * std::cos(0.71f * static_cast<float>(i));
  auto out =
      RunSingleNode("LogSoftmax", 13, {Input("x", DataType::kFloat32, {kOuter, kN, kInner}, xs)},
                    {IntAttribute("axis", 1)}, DataType::kFloat32);
  ASSERT_TRUE(out.has_value());
  auto ys = out->values<float>();
  for (int64_t o = 0; o < kOuter; ++o) {
    for (int64_t j = 0; j < kInner; ++j) {
      auto at = [&](int64_t i) { return (o * kN + i) * kInner + j; };
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < kN; ++i) max = std::max(max, double{xs[at(i)]});
      double sum = 0;
      for (int64_t i = 0; i < kN; ++i) sum += std::exp(xs[at(i)] - max);
      for (int64_t i = 0; i < kN; ++i) {
        const double expected = xs[at(i)] - max - std::log(sum);
        EXPECT_NEAR(ys[at(i)], expected, 1e-5 * (1.0 + std::fabs(expected)))
            << o << "," << i << "," << j;
      }
    }
  }
}

}  // namespace
}  // namespace nxrt_test
