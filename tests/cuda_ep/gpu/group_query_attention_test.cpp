// The CUDA EP's com.microsoft GroupQueryAttention against a float64 reference
// computed here: the bundled decoder's geometry (8 heads, 2 KV heads, head
// size 32) at a decode step with ragged valid lengths, a first prompt and a
// later prompt, with half-split, interleaved and partial rotary embedding, in
// float32, float16 and bfloat16.
// Skipped visibly on machines without a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "gpu_test_support.hpp"

namespace {

using nxrt::graph::Attribute;
using nxrt_test::HostTensor;
using nxrt_test::IntAttribute;

constexpr int64_t kHeads = 8;
constexpr int64_t kKvHeads = 2;
constexpr int64_t kDepth = 32;
constexpr int64_t kCacheRows = 16;

std::vector<float> Floats(const HostTensor& t) {
  std::vector<float> values(t.count());
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(t.at(i));
  return values;
}

// `x` rounded to `dtype`, as the kernel stores a rotated key in the cache.
double RoundTo(nxrt_dtype dtype, double x) {
  if (dtype == NXRT_DTYPE_FLOAT32) return x;
  return nxrt_test::FloatTensor(dtype, {1}, {static_cast<float>(x)}).at(0);
}

struct Case {
  int64_t batch = 1;
  int64_t seq = 1;
  int64_t past = 0;
  std::vector<int64_t> seqlens_k;
  int64_t total = 0;
  int64_t rotary_half = kDepth / 2;
  bool interleaved = false;
  nxrt_dtype dtype = NXRT_DTYPE_FLOAT32;
};

struct Reference {
  std::vector<double> output, present_key, present_value;
};

// Element d of x rotated to `position`, as the CPU EP's RotateHead does.
std::vector<double> Rotate(const float* x, const float* cos, const float* sin, int64_t half,
                           int64_t position, bool interleaved) {
  std::vector<double> y(x, x + kDepth);
  for (int64_t i = 0; i < half; ++i) {
    const int64_t a = interleaved ? 2 * i : i;
    const int64_t b = interleaved ? 2 * i + 1 : i + half;
    const double c = cos[position * half + i], s = sin[position * half + i];
    y[a] = x[a] * c - x[b] * s;
    y[b] = x[b] * c + x[a] * s;
  }
  return y;
}

Reference Compute(const Case& c, const std::vector<HostTensor>& in) {
  const auto q = Floats(in[0]), k = Floats(in[1]), v = Floats(in[2]);
  const auto pk = Floats(in[3]), pv = Floats(in[4]), cos = Floats(in[7]), sin = Floats(in[8]);
  const int64_t capacity = c.past + c.seq;
  const int64_t group = kHeads / kKvHeads;
  Reference r;
  r.output.assign(c.batch * c.seq * kHeads * kDepth, 0.0);
  r.present_key.assign(c.batch * kKvHeads * capacity * kDepth, 0.0);
  r.present_value = r.present_key;
  for (int64_t b = 0; b < c.batch; ++b) {
    const int64_t valid = c.seqlens_k[b] + 1;
    const int64_t past = c.seq == c.total ? 0 : valid - c.seq;
    for (int64_t h = 0; h < kKvHeads; ++h) {
      for (int64_t row = 0; row < capacity; ++row) {
        double* pk_row = &r.present_key[((b * kKvHeads + h) * capacity + row) * kDepth];
        double* pv_row = &r.present_value[((b * kKvHeads + h) * capacity + row) * kDepth];
        if (row < past) {
          const int64_t at = ((b * kKvHeads + h) * c.past + row) * kDepth;
          std::copy_n(&pk[at], kDepth, pk_row);
          std::copy_n(&pv[at], kDepth, pv_row);
        } else if (row < past + c.seq) {
          const int64_t at = ((b * c.seq + row - past) * kKvHeads + h) * kDepth;
          const auto rotated =
              Rotate(&k[at], cos.data(), sin.data(), c.rotary_half, row, c.interleaved);
          for (int64_t d = 0; d < kDepth; ++d) pk_row[d] = RoundTo(c.dtype, rotated[d]);
          std::copy_n(&v[at], kDepth, pv_row);
        }
      }
    }
    for (int64_t s = 0; s < c.seq; ++s) {
      for (int64_t n = 0; n < kHeads; ++n) {
        const int64_t at = ((b * c.seq + s) * kHeads + n) * kDepth;
        const auto query =
            Rotate(&q[at], cos.data(), sin.data(), c.rotary_half, past + s, c.interleaved);
        const int64_t slab = (b * kKvHeads + n / group) * capacity * kDepth;
        const int64_t keys = std::min(past + s + 1, valid);
        std::vector<double> scores(keys);
        for (int64_t j = 0; j < keys; ++j) {
          for (int64_t d = 0; d < kDepth; ++d) {
            scores[j] += query[d] * r.present_key[slab + j * kDepth + d];
          }
          scores[j] /= std::sqrt(static_cast<double>(kDepth));
        }
        const double largest = *std::max_element(scores.begin(), scores.end());
        double sum = 0.0;
        for (double& score : scores) sum += score = std::exp(score - largest);
        for (int64_t j = 0; j < keys; ++j) {
          for (int64_t d = 0; d < kDepth; ++d) {
            r.output[at + d] += scores[j] / sum * r.present_value[slab + j * kDepth + d];
          }
        }
      }
    }
  }
  return r;
}

void ExpectNear(const HostTensor& actual, const std::vector<double>& expected,
                const std::vector<int64_t>& dims, double tolerance) {
  ASSERT_EQ(actual.dims, dims);
  ASSERT_EQ(actual.count(), expected.size());
  size_t reported = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (std::abs(actual.at(i) - expected[i]) > tolerance + tolerance * std::abs(expected[i]) &&
        reported++ < 5) {
      ADD_FAILURE() << "element " << i << ": " << actual.at(i) << " vs expected " << expected[i];
    }
  }
  EXPECT_EQ(reported, 0u) << "elements out of tolerance";
}

class CudaGroupQueryAttention : public nxrt_test::CudaTest {
 protected:
  void Check(const Case& c) {
    std::vector<float> cos(kCacheRows * c.rotary_half), sin(cos.size());
    for (int64_t p = 0; p < kCacheRows; ++p) {
      for (int64_t i = 0; i < c.rotary_half; ++i) {
        const double angle = p * std::pow(10000.0, -static_cast<double>(i) / c.rotary_half);
        cos[p * c.rotary_half + i] = static_cast<float>(std::cos(angle));
        sin[p * c.rotary_half + i] = static_cast<float>(std::sin(angle));
      }
    }
    const std::vector<HostTensor> inputs = {
        nxrt_test::EighthsTensor(c.dtype, {c.batch, c.seq, kHeads * kDepth}, 1),
        nxrt_test::EighthsTensor(c.dtype, {c.batch, c.seq, kKvHeads * kDepth}, 2),
        nxrt_test::EighthsTensor(c.dtype, {c.batch, c.seq, kKvHeads * kDepth}, 3),
        nxrt_test::EighthsTensor(c.dtype, {c.batch, kKvHeads, c.past, kDepth}, 4),
        nxrt_test::EighthsTensor(c.dtype, {c.batch, kKvHeads, c.past, kDepth}, 5),
        nxrt_test::IntTensor(NXRT_DTYPE_INT32, {c.batch}, c.seqlens_k),
        nxrt_test::IntTensor(NXRT_DTYPE_INT32, {}, {c.total}),
        nxrt_test::FloatTensor(c.dtype, {kCacheRows, c.rotary_half}, cos),
        nxrt_test::FloatTensor(c.dtype, {kCacheRows, c.rotary_half}, sin),
    };
    const auto dims = nxrt_test::InputDims(inputs);
    auto graph = nxrt_test::MakeSingleNodeGraph(
        "GroupQueryAttention", dims, {},
        {IntAttribute("num_heads", kHeads), IntAttribute("kv_num_heads", kKvHeads),
         IntAttribute("do_rotary", 1), IntAttribute("rotary_interleaved", c.interleaved ? 1 : 0)});
    nxrt::graph::Graph& g = *graph.graph;
    g.opset_imports["com.microsoft"] = 1;
    auto& node = g.nodes[graph.node.index];
    node.domain = "com.microsoft";
    g.values[node.outputs[0]->index].shape.reset();
    for (const char* name : {"present_key", "present_value"}) {
      nxrt::graph::Value present;
      present.name = name;
      present.dtype = static_cast<nxrt::graph::DataType>(c.dtype);
      node.outputs.push_back(g.AddValue(std::move(present)));
    }
    const auto actual = nxrt_test::RunNode(*cuda_, graph, inputs, 17);
    ASSERT_EQ(actual.size(), 3u);
    const Reference expected = Compute(c, inputs);
    const std::vector<int64_t> present_dims{c.batch, kKvHeads, c.past + c.seq, kDepth};
    // Outputs are rounded to the tensor type; the arithmetic is float throughout.
    const double tolerance = c.dtype == NXRT_DTYPE_FLOAT32   ? 1e-4
                             : c.dtype == NXRT_DTYPE_FLOAT16 ? 2e-3
                                                             : 1e-2;
    {
      SCOPED_TRACE("output");
      ExpectNear(actual[0], expected.output, {c.batch, c.seq, kHeads * kDepth}, tolerance);
    }
    {
      SCOPED_TRACE("present_key");
      ExpectNear(actual[1], expected.present_key, present_dims, tolerance);
    }
    {
      SCOPED_TRACE("present_value");
      ExpectNear(actual[2], expected.present_value, present_dims, tolerance);
    }
  }
};

TEST_F(CudaGroupQueryAttention, DecodeStepWithRaggedValidLengths) {
  Check({.batch = 2, .seq = 1, .past = 5, .seqlens_k = {5, 3}, .total = 6});
}

TEST_F(CudaGroupQueryAttention, FirstPromptIsCausal) {
  Check({.batch = 1, .seq = 4, .past = 0, .seqlens_k = {3}, .total = 4});
}

TEST_F(CudaGroupQueryAttention, LaterPromptFollowsThePast) {
  Check({.batch = 1, .seq = 3, .past = 4, .seqlens_k = {6}, .total = 7});
}

TEST_F(CudaGroupQueryAttention, InterleavedAndPartialRotary) {
  Check({.batch = 1, .seq = 1, .past = 6, .seqlens_k = {6}, .total = 7, .interleaved = true});
  Check({.batch = 1, .seq = 1, .past = 6, .seqlens_k = {6}, .total = 7, .rotary_half = 8});
}

TEST_F(CudaGroupQueryAttention, SixteenBitTypesComputeInFloat) {
  for (nxrt_dtype dtype : {NXRT_DTYPE_FLOAT16, NXRT_DTYPE_BFLOAT16}) {
    SCOPED_TRACE(dtype);
    Check({.batch = 2, .seq = 1, .past = 5, .seqlens_k = {5, 3}, .total = 6, .dtype = dtype});
    Check({.batch = 1,
           .seq = 3,
           .past = 4,
           .seqlens_k = {6},
           .total = 7,
           .interleaved = true,
           .dtype = dtype});
  }
}

}  // namespace
