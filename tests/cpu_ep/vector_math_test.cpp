// The CPU EP's float Exp, Erf, Sigmoid and Softmax against the standard
// library in double, over inputs that sweep every binade the functions
// care about, the edges of the float range, and the special values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "single_node_session.hpp"

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

std::vector<float> RunUnaryOp(const std::string& op, const std::vector<float>& xs) {
  auto out =
      RunSingleNode(op, 17, {Input("x", DataType::kFloat32, {static_cast<int64_t>(xs.size())}, xs)},
                    {}, DataType::kFloat32);
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

}  // namespace
}  // namespace nxrt_test
