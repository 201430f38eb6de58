// Elementwise ops on the ONNX node test cases: unary math and activations,
// binary arithmetic, comparisons and logic with broadcasting, the variadic
// ops, Where and Clip. Swish, SwiGLU, signed BitShift (arithmetic right
// shifts, wrapping left shifts, out-of-range amounts) and the per-channel
// slope of PRelu before opset 7, Clip with min above max, Relu of NaN and
// Pow by a scalar 2 or 3 (multiplied out, not a pow call) are checked
// against references computed here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "node_case_runner.hpp"
#include "single_node_session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;

TEST(CpuEpElementwise, UnaryMathNodeCases) {
  ExpectFamilyPasses(
      "unary math",
      {"Abs",  "Neg",   "Exp",   "Log",   "Sqrt", "Reciprocal", "Floor", "Ceil", "Round",
       "Sign", "Sin",   "Cos",   "Tan",   "Asin", "Acos",       "Atan",  "Sinh", "Cosh",
       "Tanh", "Asinh", "Acosh", "Atanh", "Erf",  "IsNaN",      "IsInf", "Not"});
}

TEST(CpuEpElementwise, ActivationNodeCases) {
  ExpectFamilyPasses("activations", {"Sigmoid", "HardSigmoid", "Relu", "LeakyRelu", "Elu", "Selu",
                                     "Celu", "Gelu", "Softplus", "Softsign", "HardSwish", "Mish",
                                     "ThresholdedRelu", "Shrink", "Clip", "PRelu"});
}

// Gelu computes the exact form and the tanh one; any other is declined with
// the two it has.
TEST(CpuEpElementwise, GeluDeclinesAnUnknownApproximation) {
  TensorNode gelu;
  gelu.op = "Gelu";
  gelu.opset = 20;
  gelu.inputs = {{"x", Values<float>({2}, {-1, 1})}};
  gelu.outputs = {DataType::kFloat32};
  gelu.attributes = {StringAttribute("approximate", "erf")};
  auto declined = RunTensorNode(gelu);
  ASSERT_FALSE(declined.ok());
  EXPECT_NE(declined.status().message().find("approximate=erf is neither of the forms this EP "
                                             "computes, none and tanh"),
            std::string::npos)
      << declined.status().message();
}

TEST(CpuEpElementwise, BinaryNodeCases) {
  ExpectFamilyPasses("binary", {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "BitShift", "BitwiseAnd",
                                "BitwiseOr", "BitwiseXor", "BitwiseNot"});
}

TEST(CpuEpElementwise, ComparisonAndLogicNodeCases) {
  ExpectFamilyPasses("comparison and logic", {"Equal", "Less", "LessOrEqual", "Greater",
                                              "GreaterOrEqual", "And", "Or", "Xor", "Where"});
}

TEST(CpuEpElementwise, VariadicNodeCases) {
  ExpectFamilyPasses("variadic", {"Max", "Min", "Sum", "Mean"});
}

TEST(CpuEpElementwise, SwishAndSwiGluMatchTheirDefinitions) {
  std::vector<float> a(12), b(12);
  for (int i = 0; i < 12; ++i) {
    a[i] = 0.7f * static_cast<float>(i - 6);
    b[i] = 0.25f * static_cast<float>(i % 5) - 0.5f;
  }
  const float alpha = 1.702f;
  auto swish = [&](double x) { return x / (1.0 + std::exp(-alpha * x)); };
  auto y = RunSingleNode("Swish", 24, {Input("x", DataType::kFloat32, {3, 4}, a)},
                         {FloatAttribute("alpha", alpha)}, DataType::kFloat32);
  auto z = RunSingleNode(
      "SwiGLU", 28,
      {Input("a", DataType::kFloat32, {3, 4}, a), Input("b", DataType::kFloat32, {3, 4}, b)},
      {FloatAttribute("alpha", alpha)}, DataType::kFloat32);
  ASSERT_TRUE(y.has_value() && z.has_value());
  const std::vector<double> vy = ValuesAsDouble(*y), vz = ValuesAsDouble(*z);
  for (int i = 0; i < 12; ++i) {
    EXPECT_NEAR(vy[i], swish(a[i]), 1e-5) << i;
    EXPECT_NEAR(vz[i], swish(a[i]) * b[i], 1e-5) << i;
  }
}

TEST(CpuEpElementwise, SignedBitShiftCoversEveryAmount) {
  // Every int8 value against the amounts -1, 0, 3, 7, 8 and 9.
  std::vector<int8_t> x, amount;
  for (int v = -128; v < 128; ++v) {
    for (int k : {-1, 0, 3, 7, 8, 9}) {
      x.push_back(static_cast<int8_t>(v));
      amount.push_back(static_cast<int8_t>(k));
    }
  }
  const int64_t n = static_cast<int64_t>(x.size());
  for (const char* direction : {"LEFT", "RIGHT"}) {
    auto y = RunSingleNode(
        "BitShift", 28,
        {Input("x", DataType::kInt8, {n}, x), Input("y", DataType::kInt8, {n}, amount)},
        {StringAttribute("direction", direction)}, DataType::kInt8);
    ASSERT_TRUE(y.has_value());
    const auto v = y->values<int8_t>();
    for (int64_t i = 0; i < n; ++i) {
      const int value = x[i], k = amount[i];
      int expected;
      if (direction[0] == 'L') {
        expected = k < 0 || k >= 8 ? 0 : static_cast<int8_t>((value * (1 << k)) & 0xff);
      } else if (k < 0 || k >= 8) {
        expected = value < 0 ? -1 : 0;
      } else {
        // Floor division by 2^k is the arithmetic right shift.
        expected = static_cast<int>(std::floor(value / std::pow(2.0, k)));
      }
      EXPECT_EQ(v[i], expected) << direction << " " << value << " by " << k;
    }
  }
}

// Integer arithmetic wraps in two's complement, as ONNX Runtime's does (the
// sanitized build fails this where signed overflow is left undefined).
int32_t Wrapped(int64_t exact) {
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(exact)));
}

TEST(CpuEpElementwise, SignedIntegerArithmeticWraps) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int32_t>::min();
  const std::vector<int32_t> a{int32_t{kMax}, int32_t{kMax}, int32_t{kMin}};
  const std::vector<int32_t> b{3, 1, -1};
  for (const char* op : {"Mul", "Add"}) {
    auto y = RunSingleNode(
        op, 14, {Input("a", DataType::kInt32, {3}, a), Input("b", DataType::kInt32, {3}, b)}, {},
        DataType::kInt32);
    ASSERT_TRUE(y.has_value()) << op;
    const auto v = y->values<int32_t>();
    for (size_t i = 0; i < a.size(); ++i) {
      const int64_t exact = op[0] == 'M' ? int64_t{a[i]} * b[i] : int64_t{a[i]} + b[i];
      EXPECT_EQ(v[i], Wrapped(exact)) << op << " " << a[i] << ", " << b[i];
    }
  }
  auto product =
      RunSingleNode("CumProd", 26,
                    {Input("x", DataType::kInt32, {3}, std::vector<int32_t>{int32_t{kMax}, 3, 2}),
                     Input("axis", DataType::kInt32, {}, std::vector<int32_t>{0})},
                    {}, DataType::kInt32);
  ASSERT_TRUE(product.has_value());
  const auto p = product->values<int32_t>();
  const int32_t second = Wrapped(kMax * 3);
  EXPECT_EQ(std::vector<int32_t>(p.begin(), p.end()),
            (std::vector<int32_t>{int32_t{kMax}, second, Wrapped(int64_t{second} * 2)}));
}

TEST(CpuEpElementwise, ClipIsMinOfMaxSoMinAboveMaxGivesMax) {
  const std::vector<float> x{-3.0f, 0.0f, 1.5f, 5.0f};
  const auto clip = [&](float lo, float hi) {
    auto y = RunSingleNode("Clip", 13,
                           {Input("x", DataType::kFloat32, {4}, x),
                            Input("min", DataType::kFloat32, {}, std::vector<float>{lo}),
                            Input("max", DataType::kFloat32, {}, std::vector<float>{hi})},
                           {}, DataType::kFloat32);
    return y ? ValuesAsDouble(*y) : std::vector<double>{};
  };
  EXPECT_EQ(clip(0.0f, 2.0f), (std::vector<double>{0.0, 0.0, 1.5, 2.0}));
  // min(max(x, 4), 1) is 1 for every x.
  EXPECT_EQ(clip(4.0f, 1.0f), (std::vector<double>{1.0, 1.0, 1.0, 1.0}));
}

// Pow by one exponent of 2 or 3, float or integer typed, gives pow's
// float32 values; other exponents and a per-element exponent still call pow.
TEST(CpuEpElementwise, PowByTwoOrThreeGivesPowsValues) {
  std::vector<float> x(41);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.37f * static_cast<float>(i) - 7.3f;
  x[5] = std::numeric_limits<float>::infinity();
  x[9] = -0.0f;
  for (const double e : {2.0, 3.0, 0.5, -1.0}) {
    for (const bool integer : {false, true}) {
      if (integer && e != std::floor(e)) continue;
      const NodeInput exponent =
          integer ? Input("e", DataType::kInt64, {}, std::vector<int64_t>{static_cast<int64_t>(e)})
                  : Input("e", DataType::kFloat32, {}, std::vector<float>{static_cast<float>(e)});
      auto y = RunSingleNode("Pow", 15, {Input("x", DataType::kFloat32, {41}, x), exponent}, {},
                             DataType::kFloat32);
      ASSERT_TRUE(y.has_value()) << e;
      const auto v = y->values<float>();
      ASSERT_EQ(v.size(), x.size());
      for (size_t i = 0; i < x.size(); ++i) {
        const float expected = static_cast<float>(std::pow(static_cast<double>(x[i]), e));
        if (std::isnan(expected)) {
          EXPECT_TRUE(std::isnan(v[i])) << x[i] << "^" << e;
        } else {
          EXPECT_EQ(v[i], expected) << x[i] << "^" << e;
        }
      }
    }
  }
  // Each element its own exponent.
  auto y =
      RunSingleNode("Pow", 15,
                    {Input("x", DataType::kFloat32, {3}, std::vector<float>{2.0f, 3.0f, 4.0f}),
                     Input("e", DataType::kFloat32, {3}, std::vector<float>{2.0f, 3.0f, 0.5f})},
                    {}, DataType::kFloat32);
  ASSERT_TRUE(y.has_value());
  EXPECT_EQ(ValuesAsDouble(*y), (std::vector<double>{4.0, 27.0, 2.0}));
}

// Relu is max(0, x) as the ONNX reference computes it: a NaN stays NaN, as
// it does in a Conv's fused Relu. Long enough for the vectorised loop.
TEST(CpuEpElementwise, ReluKeepsNaN) {
  std::vector<float> x(37);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 5) - 2.0f;
  x[3] = x[21] = std::numeric_limits<float>::quiet_NaN();
  auto y =
      RunSingleNode("Relu", 14, {Input("x", DataType::kFloat32, {37}, x)}, {}, DataType::kFloat32);
  ASSERT_TRUE(y.has_value());
  const std::vector<double> values = ValuesAsDouble(*y);
  ASSERT_EQ(values.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(values[i])) << i;
    } else {
      EXPECT_EQ(values[i], std::max(0.0f, x[i])) << i;
    }
  }
}

TEST(CpuEpElementwise, PReluBeforeOpset7HasOneSlopePerChannel) {
  // X [2, 3, 4] and slope [3]: from opset 7 these would not broadcast.
  std::vector<float> x(24);
  for (int i = 0; i < 24; ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
  const std::vector<float> slope{0.5f, -2.0f, 3.0f};
  auto y = RunSingleNode("PRelu", 6,
                         {Input("x", DataType::kFloat32, {2, 3, 4}, x),
                          Input("slope", DataType::kFloat32, {3}, slope)},
                         {}, DataType::kFloat32);
  ASSERT_TRUE(y.has_value());
  const std::vector<double> v = ValuesAsDouble(*y);
  for (int i = 0; i < 24; ++i) {
    const float s = slope[(i / 4) % 3];
    EXPECT_EQ(v[i], x[i] < 0 ? s * x[i] : x[i]) << i;
  }
}

}  // namespace
}  // namespace nxrt_test
