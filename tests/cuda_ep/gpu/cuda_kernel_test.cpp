// Each CUDA kernel against the CPU EP on the same node and inputs; skipped
// visibly on machines without a CUDA device.
#include <cmath>

#include <gtest/gtest.h>

#include "gpu_test_support.hpp"

namespace {

using nxrt::graph::Attribute;
using nxrt_test::EighthsTensor;
using nxrt_test::FloatAttribute;
using nxrt_test::HostTensor;
using nxrt_test::IntAttribute;
using nxrt_test::IntsAttribute;
using nxrt_test::MakeSingleNodeGraph;

class CudaKernels : public nxrt_test::CudaVsCpuTest {
 protected:
  // Runs `op` on both EPs and compares every output.
  void Compare(const std::string& op, const std::vector<HostTensor>& inputs,
               std::vector<Attribute> attributes = {}, int64_t opset = 17,
               const std::set<size_t>& constants = {}, double rtol = 1e-4, double atol = 1e-5) {
    const auto dims = nxrt_test::InputDims(inputs);
    auto on_cuda = MakeSingleNodeGraph(op, dims, {}, attributes);
    auto on_cpu = MakeSingleNodeGraph(op, dims, {}, attributes);
    on_cuda.graph->values[on_cuda.graph->nodes[0].outputs[0]->index].shape.reset();
    on_cpu.graph->values[on_cpu.graph->nodes[0].outputs[0]->index].shape.reset();
    const auto actual = nxrt_test::RunNode(*cuda_, on_cuda, inputs, opset, constants);
    const auto expected = nxrt_test::RunNode(*cpu_, on_cpu, inputs, opset, constants);
    ASSERT_FALSE(actual.empty());
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i) {
      SCOPED_TRACE(op + " output " + std::to_string(i));
      EXPECT_EQ(actual[i].dtype, expected[i].dtype);
      nxrt_test::ExpectNear(actual[i], expected[i], rtol, atol);
    }
  }
};

TEST_F(CudaKernels, BinaryOpsBroadcastInEveryFloatType) {
  const double tolerance[] = {1e-5, 1e-2, 2e-2};
  const nxrt_dtype types[] = {NXRT_DTYPE_FLOAT32, NXRT_DTYPE_FLOAT16, NXRT_DTYPE_BFLOAT16};
  for (size_t t = 0; t < 3; ++t) {
    for (const char* op : {"Add", "Sub", "Mul"}) {
      SCOPED_TRACE(op);
      Compare(op, {EighthsTensor(types[t], {2, 3, 4}, 1), EighthsTensor(types[t], {4}, 2)}, {}, 17,
              {}, tolerance[t], tolerance[t]);
      Compare(op, {EighthsTensor(types[t], {2, 1, 4}, 3), EighthsTensor(types[t], {3, 1}, 4)}, {},
              17, {}, tolerance[t], tolerance[t]);
    }
  }
  Compare("Div", {EighthsTensor(NXRT_DTYPE_FLOAT32, {5, 7}, 5),
                  nxrt_test::FloatTensor(NXRT_DTYPE_FLOAT32, {7}, {1, 2, 4, -8, 0.5f, 3, -1})});
  Compare("Pow", {nxrt_test::FloatTensor(NXRT_DTYPE_FLOAT32, {4}, {1, 2, 3, 0.5f}),
                  nxrt_test::FloatTensor(NXRT_DTYPE_FLOAT32, {1}, {2})});
}

TEST_F(CudaKernels, UnaryOps) {
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Neg", "Exp", "Erf"}) {
    SCOPED_TRACE(op);
    Compare(op, {EighthsTensor(NXRT_DTYPE_FLOAT32, {3, 33}, 7)});
  }
  Compare("Sqrt", {nxrt_test::FloatTensor(NXRT_DTYPE_FLOAT32, {4}, {0, 1, 2, 9})});
  Compare("Gelu", {EighthsTensor(NXRT_DTYPE_FLOAT32, {64}, 8)}, {}, 20);
}

TEST_F(CudaKernels, MatMulPlainBatchedAndSharedWeights) {
  Compare("MatMul", {EighthsTensor(NXRT_DTYPE_FLOAT32, {5, 8}, 1),
                     EighthsTensor(NXRT_DTYPE_FLOAT32, {8, 3}, 2)});
  Compare("MatMul", {EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 5, 8}, 3),
                     EighthsTensor(NXRT_DTYPE_FLOAT32, {8, 3}, 4)});
  Compare("MatMul", {EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 5, 8}, 5),
                     EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 8, 3}, 6)});
  Compare("MatMul",
          {EighthsTensor(NXRT_DTYPE_FLOAT16, {16, 32}, 7),
           EighthsTensor(NXRT_DTYPE_FLOAT16, {32, 8}, 8)},
          {}, 17, {}, 1e-2, 1e-2);
}

TEST_F(CudaKernels, GemmTransposesScalesAndBroadcastsC) {
  Compare("Gemm",
          {EighthsTensor(NXRT_DTYPE_FLOAT32, {8, 4}, 1),
           EighthsTensor(NXRT_DTYPE_FLOAT32, {3, 8}, 2), EighthsTensor(NXRT_DTYPE_FLOAT32, {3}, 3)},
          {IntAttribute("transA", 1), IntAttribute("transB", 1), FloatAttribute("alpha", 0.5f),
           FloatAttribute("beta", 2.0f)});
  Compare("Gemm", {EighthsTensor(NXRT_DTYPE_FLOAT32, {4, 8}, 4),
                   EighthsTensor(NXRT_DTYPE_FLOAT32, {8, 3}, 5),
                   EighthsTensor(NXRT_DTYPE_FLOAT32, {4, 1}, 6)});
}

TEST_F(CudaKernels, SoftmaxAndNormalizations) {
  Compare("Softmax", {EighthsTensor(NXRT_DTYPE_FLOAT32, {3, 4, 300}, 1)}, {}, 13);
  Compare("Softmax", {EighthsTensor(NXRT_DTYPE_FLOAT16, {2, 37}, 2)}, {}, 13, {}, 1e-2, 1e-3);
  Compare("LayerNormalization",
          {EighthsTensor(NXRT_DTYPE_FLOAT32, {6, 96}, 3),
           EighthsTensor(NXRT_DTYPE_FLOAT32, {96}, 4), EighthsTensor(NXRT_DTYPE_FLOAT32, {96}, 5)},
          {FloatAttribute("epsilon", 1e-5f)});
  Compare(
      "RMSNormalization",
      {EighthsTensor(NXRT_DTYPE_FLOAT32, {6, 96}, 6), EighthsTensor(NXRT_DTYPE_FLOAT32, {96}, 7)},
      {}, 23);
}

TEST_F(CudaKernels, LastAxisReductions) {
  Compare("ReduceMean", {EighthsTensor(NXRT_DTYPE_FLOAT32, {4, 5, 70}, 1)},
          {IntsAttribute("axes", {-1})});
  Compare("ReduceSum", {EighthsTensor(NXRT_DTYPE_FLOAT32, {4, 70}, 2)},
          {IntsAttribute("axes", {1}), IntAttribute("keepdims", 0)}, 11);
}

TEST_F(CudaKernels, DataMovement) {
  Compare("Transpose", {EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 3, 4, 5}, 1)},
          {IntsAttribute("perm", {0, 2, 3, 1})});
  Compare("Concat",
          {EighthsTensor(NXRT_DTYPE_FLOAT16, {2, 3, 4}, 2),
           EighthsTensor(NXRT_DTYPE_FLOAT16, {2, 5, 4}, 3)},
          {IntAttribute("axis", 1)});
  Compare("Gather", {EighthsTensor(NXRT_DTYPE_FLOAT32, {10, 6}, 4),
                     nxrt_test::IntTensor(NXRT_DTYPE_INT64, {2, 2}, {9, 0, -1, 3})});
  Compare("Gather",
          {EighthsTensor(NXRT_DTYPE_FLOAT32, {3, 10, 2}, 5),
           nxrt_test::IntTensor(NXRT_DTYPE_INT32, {3}, {1, 7, 2})},
          {IntAttribute("axis", 1)});
  Compare("Slice",
          {EighthsTensor(NXRT_DTYPE_FLOAT32, {6, 10}, 6),
           nxrt_test::IntTensor(NXRT_DTYPE_INT64, {2}, {1, 9}),
           nxrt_test::IntTensor(NXRT_DTYPE_INT64, {2}, {5, 0}),
           nxrt_test::IntTensor(NXRT_DTYPE_INT64, {2}, {0, 1}),
           nxrt_test::IntTensor(NXRT_DTYPE_INT64, {2}, {2, -3})},
          {}, 13, {1, 2, 3, 4});
  Compare("Reshape",
          {EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 3, 4}, 7),
           nxrt_test::IntTensor(NXRT_DTYPE_INT64, {2}, {-1, 4})},
          {}, 14, {1});
  Compare("Flatten", {EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 3, 4}, 8)}, {IntAttribute("axis", 2)});
  Compare("Unsqueeze",
          {EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 3}, 9),
           nxrt_test::IntTensor(NXRT_DTYPE_INT64, {2}, {0, -1})},
          {}, 13, {1});
}

TEST_F(CudaKernels, CastsRoundTrip) {
  Compare("Cast", {EighthsTensor(NXRT_DTYPE_FLOAT32, {17}, 1)},
          {IntAttribute("to", NXRT_DTYPE_FLOAT16)});
  Compare("Cast", {EighthsTensor(NXRT_DTYPE_BFLOAT16, {17}, 2)},
          {IntAttribute("to", NXRT_DTYPE_FLOAT32)});
  Compare("Cast", {nxrt_test::IntTensor(NXRT_DTYPE_INT64, {4}, {-3, 0, 7, 1 << 20})},
          {IntAttribute("to", NXRT_DTYPE_INT32)});
  Compare("Cast", {nxrt_test::FloatTensor(NXRT_DTYPE_FLOAT32, {3}, {-2.5f, 0.75f, 9.0f})},
          {IntAttribute("to", NXRT_DTYPE_INT64)});
}

}  // namespace
