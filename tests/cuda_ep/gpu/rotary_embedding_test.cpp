// The CUDA EP's RotaryEmbedding (default domain opset 23 and com.microsoft)
// against the CPU EP on the same node and inputs: half-split and
// interleaved, partial rotary dimension, rank-3 and rank-4 input, positions
// per token, one offset or none, in float32, float16 and bfloat16. Skipped
// visibly on machines without a CUDA device.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_test_support.hpp"

namespace {

using nxrt::graph::Attribute;
using nxrt_test::EighthsTensor;
using nxrt_test::HostTensor;
using nxrt_test::IntAttribute;
using nxrt_test::IntTensor;

// Positions 0..rows-1 in a scattered order, `count` of them.
HostTensor Positions(std::vector<int64_t> dims, int64_t count, int64_t rows) {
  std::vector<int64_t> values(count);
  for (int64_t i = 0; i < count; ++i) values[i] = (i * 7 + 3) % rows;
  return IntTensor(NXRT_DTYPE_INT64, std::move(dims), values);
}

class CudaRotaryEmbedding : public nxrt_test::CudaVsCpuTest {
 protected:
  // Runs RotaryEmbedding of `domain` on both EPs and compares the output.
  void Compare(const std::string& domain, const std::vector<HostTensor>& inputs,
               const std::vector<Attribute>& attributes, double tolerance = 1e-5) {
    const auto dims = nxrt_test::InputDims(inputs);
    auto make = [&] {
      auto graph = nxrt_test::MakeSingleNodeGraph("RotaryEmbedding", dims, {}, attributes);
      nxrt::graph::Graph& g = *graph.graph;
      auto& node = g.nodes[graph.node.index];
      node.domain = domain;
      if (!domain.empty()) g.opset_imports[domain] = 1;
      g.values[node.outputs[0]->index].shape.reset();
      return graph;
    };
    auto on_cuda = make();
    auto on_cpu = make();
    const auto actual = nxrt_test::RunNode(*cuda_, on_cuda, inputs, 23);
    const auto expected = nxrt_test::RunNode(*cpu_, on_cpu, inputs, 23);
    ASSERT_EQ(actual.size(), 1u);
    ASSERT_EQ(expected.size(), 1u);
    EXPECT_EQ(actual[0].dtype, expected[0].dtype);
    nxrt_test::ExpectNear(actual[0], expected[0], tolerance, tolerance);
  }
};

TEST_F(CudaRotaryEmbedding, HeadsFirstHalfSplitAndInterleaved) {
  for (int64_t interleaved : {0, 1}) {
    SCOPED_TRACE(interleaved);
    Compare("",
            {EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 4, 5, 16}, 1),
             EighthsTensor(NXRT_DTYPE_FLOAT32, {12, 8}, 2),
             EighthsTensor(NXRT_DTYPE_FLOAT32, {12, 8}, 3), Positions({2, 5}, 10, 12)},
            {IntAttribute("interleaved", interleaved)});
  }
}

TEST_F(CudaRotaryEmbedding, SequenceFirstWithPartialRotaryDim) {
  for (int64_t interleaved : {0, 1}) {
    SCOPED_TRACE(interleaved);
    Compare("",
            {EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 5, 4 * 16}, 4),
             EighthsTensor(NXRT_DTYPE_FLOAT32, {12, 4}, 5),
             EighthsTensor(NXRT_DTYPE_FLOAT32, {12, 4}, 6), Positions({2, 5}, 10, 12)},
            {IntAttribute("interleaved", interleaved), IntAttribute("num_heads", 4),
             IntAttribute("rotary_embedding_dim", 8)});
  }
}

TEST_F(CudaRotaryEmbedding, CachesPerTokenWithoutPositions) {
  Compare("",
          {EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 3, 5, 16}, 7),
           EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 5, 8}, 8),
           EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 5, 8}, 9)},
          {});
}

TEST_F(CudaRotaryEmbedding, SixteenBitTypesComputeInFloat) {
  for (nxrt_dtype dtype : {NXRT_DTYPE_FLOAT16, NXRT_DTYPE_BFLOAT16}) {
    SCOPED_TRACE(dtype);
    Compare("",
            {EighthsTensor(dtype, {2, 5, 4 * 16}, 10), EighthsTensor(dtype, {12, 6}, 11),
             EighthsTensor(dtype, {12, 6}, 12), Positions({2, 5}, 10, 12)},
            {IntAttribute("num_heads", 4), IntAttribute("rotary_embedding_dim", 12)},
            dtype == NXRT_DTYPE_FLOAT16 ? 2e-3 : 1e-2);
  }
}

TEST_F(CudaRotaryEmbedding, MicrosoftDomainPositionsOrOneOffset) {
  for (int64_t interleaved : {0, 1}) {
    SCOPED_TRACE(interleaved);
    Compare("com.microsoft",
            {EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 5, 4 * 16}, 13), Positions({2, 5}, 10, 12),
             EighthsTensor(NXRT_DTYPE_FLOAT32, {12, 8}, 14),
             EighthsTensor(NXRT_DTYPE_FLOAT32, {12, 8}, 15)},
            {IntAttribute("interleaved", interleaved), IntAttribute("num_heads", 4)});
  }
  Compare("com.microsoft",
          {EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 5, 4 * 16}, 16),
           IntTensor(NXRT_DTYPE_INT64, {1}, {6}), EighthsTensor(NXRT_DTYPE_FLOAT32, {12, 8}, 17),
           EighthsTensor(NXRT_DTYPE_FLOAT32, {12, 8}, 18)},
          {});
  Compare("com.microsoft",
          {EighthsTensor(NXRT_DTYPE_FLOAT32, {1, 4, 3, 16}, 19), Positions({1, 3}, 3, 12),
           EighthsTensor(NXRT_DTYPE_FLOAT32, {12, 8}, 20),
           EighthsTensor(NXRT_DTYPE_FLOAT32, {12, 8}, 21)},
          {});
}

}  // namespace
