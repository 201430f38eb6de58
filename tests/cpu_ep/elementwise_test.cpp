// Elementwise ops on the ONNX node test cases: unary math and activations,
// binary arithmetic, comparisons and logic with broadcasting, the variadic
// ops, Where and Clip.
#include <gtest/gtest.h>

#include "node_case_runner.hpp"

namespace nxrt_test {
namespace {

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

}  // namespace
}  // namespace nxrt_test
