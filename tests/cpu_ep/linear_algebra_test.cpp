// MatMul, Gemm, MatMulInteger, Einsum, Conv and ConvTranspose on the ONNX
// node test cases.
#include <gtest/gtest.h>

#include "node_case_runner.hpp"

namespace nxrt_test {
namespace {

TEST(CpuEpLinearAlgebra, MatMulGemmEinsumNodeCases) {
  ExpectFamilyPasses("matmul", {"MatMul", "Gemm", "MatMulInteger", "Einsum"});
}

TEST(CpuEpLinearAlgebra, ConvNodeCases) {
  ExpectFamilyPasses("conv", {"Conv", "ConvTranspose"});
}

}  // namespace
}  // namespace nxrt_test
