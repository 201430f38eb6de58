// The CUDA EP's default-domain Attention (opset 23) against the CPU EP on the
// same node and inputs: rank-3 and rank-4 Q/K/V, query heads grouped over
// fewer KV heads, a growing past with both present outputs, causal masking,
// bool and float masks (with a fully masked row), softcap and scale, and
// float16/bfloat16. Skipped visibly on machines without a CUDA device.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"

namespace {

using nxrt::graph::Attribute;
using nxrt_test::EighthsTensor;
using nxrt_test::FloatAttribute;
using nxrt_test::FloatTensor;
using nxrt_test::HostTensor;
using nxrt_test::IntAttribute;

// An omitted optional input.
HostTensor Absent() {
  return HostTensor{NXRT_DTYPE_UNDEFINED, {}, {}};
}

// Values k/64 for k in [-16, 16]: exact in every float type, and small
// enough that 16-bit rounding of the scores stays far below the tolerance.
HostTensor SmallTensor(nxrt_dtype dtype, std::vector<int64_t> dims, uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> steps(-16, 16);
  size_t count = 1;
  for (int64_t d : dims) count *= static_cast<size_t>(d);
  std::vector<float> values(count);
  for (float& v : values) v = static_cast<float>(steps(random)) / 64.0f;
  return FloatTensor(dtype, std::move(dims), values);
}

// A bool mask over [rows, keys]: key j visible to row i unless (i + j) % 3
// == 0; row `blind_row` sees nothing.
HostTensor BoolMask(std::vector<int64_t> dims, int64_t blind_row) {
  const int64_t keys = dims.back();
  size_t count = 1;
  for (int64_t d : dims) count *= static_cast<size_t>(d);
  HostTensor t{NXRT_DTYPE_BOOL, std::move(dims), std::vector<std::byte>(count)};
  for (size_t e = 0; e < count; ++e) {
    const int64_t i = static_cast<int64_t>(e) / keys;
    const int64_t j = static_cast<int64_t>(e) % keys;
    t.bytes[e] = static_cast<std::byte>(i != blind_row && (i + j) % 3 != 0 ? 1 : 0);
  }
  return t;
}

class CudaAttention : public nxrt_test::CudaVsCpuTest {
 protected:
  // Runs Attention-23 on both EPs, with present_key and present_value
  // outputs when `presents`, and compares every output.
  void Compare(const std::vector<HostTensor>& inputs, const std::vector<Attribute>& attributes,
               bool presents, double tolerance = 1e-4) {
    const auto dims = nxrt_test::InputDims(inputs);
    auto make = [&] {
      auto graph = nxrt_test::MakeSingleNodeGraph("Attention", dims, {}, attributes);
      nxrt::graph::Graph& g = *graph.graph;
      auto& node = g.nodes[graph.node.index];
      g.values[node.outputs[0]->index].shape.reset();
      if (presents) {
        for (const char* name : {"present_key", "present_value"}) {
          nxrt::graph::Value present;
          present.name = name;
          present.dtype = static_cast<nxrt::graph::DataType>(inputs[0].dtype);
          node.outputs.push_back(g.AddValue(std::move(present)));
        }
      }
      return graph;
    };
    auto on_cuda = make();
    auto on_cpu = make();
    const auto actual = nxrt_test::RunNode(*cuda_, on_cuda, inputs, 23);
    const auto expected = nxrt_test::RunNode(*cpu_, on_cpu, inputs, 23);
    ASSERT_EQ(actual.size(), presents ? 3u : 1u);
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i) {
      SCOPED_TRACE("output " + std::to_string(i));
      EXPECT_EQ(actual[i].dtype, expected[i].dtype);
      nxrt_test::ExpectNear(actual[i], expected[i], tolerance, tolerance);
    }
  }
};

TEST_F(CudaAttention, HeadsFirstGroupedWithoutPastOrMask) {
  // 8 query heads over 2 KV heads; 3 queries over 5 keys; V heads of 8.
  Compare({SmallTensor(NXRT_DTYPE_FLOAT32, {2, 8, 3, 16}, 1),
           SmallTensor(NXRT_DTYPE_FLOAT32, {2, 2, 5, 16}, 2),
           EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 2, 5, 8}, 3)},
          {}, false);
}

TEST_F(CudaAttention, CausalWithGrowingPast) {
  Compare({EighthsTensor(NXRT_DTYPE_FLOAT32, {1, 4, 3, 16}, 4),
           EighthsTensor(NXRT_DTYPE_FLOAT32, {1, 2, 3, 16}, 5),
           EighthsTensor(NXRT_DTYPE_FLOAT32, {1, 2, 3, 16}, 6), Absent(),
           EighthsTensor(NXRT_DTYPE_FLOAT32, {1, 2, 5, 16}, 7),
           EighthsTensor(NXRT_DTYPE_FLOAT32, {1, 2, 5, 16}, 8)},
          {IntAttribute("is_causal", 1)}, true);
}

TEST_F(CudaAttention, PresentsWithoutPastAreTheNewRows) {
  Compare({EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 4, 4, 16}, 9),
           EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 4, 4, 16}, 10),
           EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 4, 4, 16}, 11)},
          {IntAttribute("is_causal", 1)}, true);
}

TEST_F(CudaAttention, BoolMaskBroadcastOverBatchAndHeads) {
  // Mask [q_len, past + kv_len]; query row 1 sees no key at all.
  Compare({SmallTensor(NXRT_DTYPE_FLOAT32, {2, 4, 3, 16}, 12),
           SmallTensor(NXRT_DTYPE_FLOAT32, {2, 2, 2, 16}, 13),
           EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 2, 2, 16}, 14), BoolMask({3, 7}, 1),
           SmallTensor(NXRT_DTYPE_FLOAT32, {2, 2, 5, 16}, 15),
           EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 2, 5, 16}, 16)},
          {}, true);
}

TEST_F(CudaAttention, FloatMaskPerBatchOnSequenceFirstInputs) {
  // Rank-3 Q [2, 3, 4 * 16] over K/V [2, 6, 2 * 16]; mask [2, 1, 3, 6] with
  // some keys at -inf.
  std::vector<float> mask(2 * 3 * 6);
  for (size_t e = 0; e < mask.size(); ++e) {
    mask[e] = e % 5 == 2 ? -std::numeric_limits<float>::infinity()
                         : static_cast<float>(e % 7) / 4.0f - 0.75f;
  }
  Compare({SmallTensor(NXRT_DTYPE_FLOAT32, {2, 3, 4 * 16}, 17),
           SmallTensor(NXRT_DTYPE_FLOAT32, {2, 6, 2 * 16}, 18),
           EighthsTensor(NXRT_DTYPE_FLOAT32, {2, 6, 2 * 16}, 19),
           FloatTensor(NXRT_DTYPE_FLOAT32, {2, 1, 3, 6}, mask)},
          {IntAttribute("q_num_heads", 4), IntAttribute("kv_num_heads", 2)}, false);
}

TEST_F(CudaAttention, SequenceFirstCausalPastWithScaleAndSoftcap) {
  Compare({EighthsTensor(NXRT_DTYPE_FLOAT32, {1, 3, 4 * 16}, 20),
           EighthsTensor(NXRT_DTYPE_FLOAT32, {1, 3, 2 * 16}, 21),
           EighthsTensor(NXRT_DTYPE_FLOAT32, {1, 3, 2 * 16}, 22), Absent(),
           EighthsTensor(NXRT_DTYPE_FLOAT32, {1, 2, 4, 16}, 23),
           EighthsTensor(NXRT_DTYPE_FLOAT32, {1, 2, 4, 16}, 24)},
          {IntAttribute("q_num_heads", 4), IntAttribute("kv_num_heads", 2),
           IntAttribute("is_causal", 1), FloatAttribute("scale", 0.2f),
           FloatAttribute("softcap", 5.0f)},
          true);
}

TEST_F(CudaAttention, SixteenBitTypesComputeInFloat) {
  for (nxrt_dtype dtype : {NXRT_DTYPE_FLOAT16, NXRT_DTYPE_BFLOAT16}) {
    SCOPED_TRACE(dtype);
    Compare({SmallTensor(dtype, {1, 4, 3, 16}, 25), SmallTensor(dtype, {1, 2, 3, 16}, 26),
             SmallTensor(dtype, {1, 2, 3, 16}, 27), BoolMask({3, 8}, -1),
             SmallTensor(dtype, {1, 2, 5, 16}, 28), SmallTensor(dtype, {1, 2, 5, 16}, 29)},
            {IntAttribute("is_causal", 1)}, true, dtype == NXRT_DTYPE_FLOAT16 ? 2e-3 : 1e-2);
  }
}

}  // namespace
