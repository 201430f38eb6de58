// Split, Shape, integer Add/Sub/Mul and integer ReduceSum on the CUDA EP
// against the CPU EP on the same node and inputs: the ops the decoders' mask
// bookkeeping and the fused QKV split need on the device. Skipped visibly on
// machines without a CUDA device.
#include <gtest/gtest.h>

#include <random>

#include "gpu_test_support.hpp"

namespace {

using nxrt::graph::Attribute;
using nxrt_test::EighthsTensor;
using nxrt_test::HostTensor;
using nxrt_test::IntAttribute;
using nxrt_test::IntsAttribute;
using nxrt_test::IntTensor;
using nxrt_test::MakeSingleNodeGraph;
using nxrt_test::SingleNodeGraph;

// Integers in [-1000, 1000] from a fixed seed: products stay exact as doubles.
HostTensor RandomIntegers(nxrt_dtype dtype, std::vector<int64_t> dims, uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int64_t> values(-1000, 1000);
  size_t count = 1;
  for (int64_t d : dims) count *= static_cast<size_t>(d);
  std::vector<int64_t> data(count);
  for (int64_t& v : data) v = values(random);
  return IntTensor(dtype, std::move(dims), data);
}

class CudaMovementAndInteger : public nxrt_test::CudaVsCpuTest {
 protected:
  // The node with `outputs` outputs of unknown shape.
  static SingleNodeGraph Node(const std::string& op, const std::vector<HostTensor>& inputs,
                              const std::vector<Attribute>& attributes, size_t outputs) {
    SingleNodeGraph g = MakeSingleNodeGraph(op, nxrt_test::InputDims(inputs), {}, attributes);
    auto& node_outputs = g.graph->nodes[g.node.index].outputs;
    g.graph->values[node_outputs[0]->index].shape.reset();
    while (node_outputs.size() < outputs) {
      nxrt::graph::Value out;
      out.name = "out" + std::to_string(node_outputs.size());
      out.dtype = nxrt::graph::DataType::kFloat32;
      node_outputs.push_back(g.graph->AddValue(std::move(out)));
    }
    return g;
  }

  // Runs `op` on both EPs and expects every output to match exactly.
  void Compare(const std::string& op, const std::vector<HostTensor>& inputs,
               const std::vector<Attribute>& attributes, int64_t opset, size_t outputs = 1,
               const std::set<size_t>& constants = {}) {
    auto on_cuda = Node(op, inputs, attributes, outputs);
    auto on_cpu = Node(op, inputs, attributes, outputs);
    const auto actual = nxrt_test::RunNode(*cuda_, on_cuda, inputs, opset, constants);
    const auto expected = nxrt_test::RunNode(*cpu_, on_cpu, inputs, opset, constants);
    ASSERT_EQ(actual.size(), outputs);
    ASSERT_EQ(expected.size(), outputs);
    for (size_t i = 0; i < outputs; ++i) {
      SCOPED_TRACE(op + " output " + std::to_string(i));
      EXPECT_EQ(actual[i].dtype, expected[i].dtype);
      nxrt_test::ExpectNear(actual[i], expected[i], 0.0, 0.0);
    }
  }
};

TEST_F(CudaMovementAndInteger, SplitByAttributeSizesAlongAMiddleAxis) {
  Compare("Split", {EighthsTensor(NXRT_DTYPE_FLOAT32, {3, 6, 4}, 1)},
          {IntAttribute("axis", 1), IntsAttribute("split", {1, 2, 3})}, 11, 3);
}

TEST_F(CudaMovementAndInteger, SplitIntoUnevenNumOutputsAlongTheLastAxis) {
  // 7 into 3 parts: 3, 3 and 1.
  Compare("Split", {EighthsTensor(NXRT_DTYPE_FLOAT16, {2, 3, 7}, 2)},
          {IntAttribute("axis", -1), IntAttribute("num_outputs", 3)}, 18, 3);
  Compare("Split", {RandomIntegers(NXRT_DTYPE_INT64, {4, 5}, 3)},
          {IntAttribute("axis", 1), IntAttribute("num_outputs", 2)}, 18, 2);
}

TEST_F(CudaMovementAndInteger, SplitBySizesFromAConstantInput) {
  Compare("Split",
          {EighthsTensor(NXRT_DTYPE_BFLOAT16, {5, 4}, 4), IntTensor(NXRT_DTYPE_INT64, {2}, {2, 3})},
          {}, 13, 2, {1});
}

TEST_F(CudaMovementAndInteger, SplitEquallyByOutputCount) {
  Compare("Split", {EighthsTensor(NXRT_DTYPE_FLOAT32, {4, 6}, 5)}, {IntAttribute("axis", 1)}, 13,
          3);
}

TEST_F(CudaMovementAndInteger, ShapeWholeAndBetweenStartAndEnd) {
  const HostTensor x = EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 3, 4, 5}, 6);
  Compare("Shape", {x}, {}, 13);
  Compare("Shape", {x}, {IntAttribute("start", 1), IntAttribute("end", -1)}, 15);
  Compare("Shape", {x}, {IntAttribute("start", -2)}, 21);
  Compare("Shape", {x}, {IntAttribute("start", 3), IntAttribute("end", 1)}, 19);
  Compare("Shape", {RandomIntegers(NXRT_DTYPE_INT64, {7}, 7)}, {}, 21);
}

TEST_F(CudaMovementAndInteger, IntegerAddSubMulWithBroadcasting) {
  for (const char* op : {"Add", "Sub", "Mul"}) {
    SCOPED_TRACE(op);
    for (nxrt_dtype dtype : {NXRT_DTYPE_INT64, NXRT_DTYPE_INT32}) {
      Compare(op, {RandomIntegers(dtype, {2, 3, 4}, 8), RandomIntegers(dtype, {2, 3, 4}, 9)}, {},
              14);
      Compare(op, {RandomIntegers(dtype, {2, 3, 4}, 10), RandomIntegers(dtype, {3, 1}, 11)}, {},
              14);
      // The decoder's shape: a vector minus a scalar.
      Compare(op, {RandomIntegers(dtype, {5}, 12), IntTensor(dtype, {}, {1})}, {}, 14);
    }
  }
}

TEST_F(CudaMovementAndInteger, IntegerReduceSumKeepdims) {
  // The decoder's mask lengths: axes a constant input, keepdims 0.
  const HostTensor mask = IntTensor(NXRT_DTYPE_INT64, {2, 6}, {1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1});
  Compare("ReduceSum", {mask, IntTensor(NXRT_DTYPE_INT64, {1}, {1})}, {IntAttribute("keepdims", 0)},
          23, 1, {1});
  const HostTensor x = RandomIntegers(NXRT_DTYPE_INT64, {3, 4, 5}, 13);
  for (int64_t keepdims : {0, 1}) {
    SCOPED_TRACE("keepdims " + std::to_string(keepdims));
    Compare("ReduceSum", {x, IntTensor(NXRT_DTYPE_INT64, {2}, {0, -1})},
            {IntAttribute("keepdims", keepdims)}, 13, 1, {1});
    Compare("ReduceSum", {x}, {IntsAttribute("axes", {1}), IntAttribute("keepdims", keepdims)}, 11);
    // No axes: every axis.
    Compare("ReduceSum", {RandomIntegers(NXRT_DTYPE_INT32, {3, 4, 5}, 14)},
            {IntAttribute("keepdims", keepdims)}, 13);
  }
  Compare("ReduceSum", {x}, {IntAttribute("noop_with_empty_axes", 1)}, 13);
}

}  // namespace
