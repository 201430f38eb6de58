// MatMul, Gemm, MatMulInteger, Einsum, Conv, ConvTranspose and ConvInteger on
// the ONNX node test cases.
#include <gtest/gtest.h>

#include "node_case_runner.hpp"

namespace nxrt_test {
namespace {

TEST(CpuEpLinearAlgebra, MatMulGemmEinsumNodeCases) {
  ExpectFamilyPasses("matmul", {"MatMul", "Gemm", "MatMulInteger", "Einsum"});
}

TEST(CpuEpLinearAlgebra, ConvNodeCases) {
  ExpectFamilyPasses("conv", {"Conv", "ConvTranspose", "ConvInteger"});
}

}  // namespace
}  // namespace nxrt_test
