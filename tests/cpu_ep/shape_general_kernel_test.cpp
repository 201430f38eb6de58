// Kernels that read their extents at compute time serve every shape of their
// node at its ranks: the session makes one, and a new shape is a hit, with
// the values a kernel made for that shape would give.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <utility>
#include <vector>

#include "cpu_environment.hpp"
#include "ir_model_builder.hpp"
#include "nxrt/session.hpp"
#include "wave.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;

constexpr int64_t kChannels = 24;
constexpr int64_t kMaps = 40;

std::unique_ptr<nxrt::Session> SessionOf(nxrt::graph::Graph graph) {
  nxrt::SessionOptions options;
  options.providers = {{"cpu", {{"threads", "1"}}}};
  auto session = nxrt::Session::Create(CpuEnvironment(), std::move(graph), options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return session.ok() ? std::move(session).value() : nullptr;
}

// x [N, 24, H, W] -> Conv 1x1 (40 maps, bias) -> Relu when `relu`.
nxrt::graph::Graph PointwiseConv(bool relu) {
  IrModelBuilder b(13, "pointwise");
  const auto x = b.SymbolicInput("x", {"n", kChannels, "h", "w"});
  const auto w = b.Floats("w", {kMaps, kChannels, 1, 1}, Wave(kMaps * kChannels, 0.77, 0.3));
  const auto bias = b.Floats("b", {kMaps}, Wave(kMaps, 1.3, 0.5));
  const auto y = b.Tensor("Conv", {x, w, bias}, "conv");
  b.Output(relu ? b.Tensor("Relu", {y}, "y") : y);
  return b.Take();
}

void ExpectPointwiseValues(nxrt::Session& session, bool relu, std::vector<int64_t> dims) {
  const int64_t pixels = dims[2] * dims[3];
  std::vector<float> x = Wave(dims[0] * kChannels * pixels, 0.41, 1.0);
  const nxrt::NamedTensor inputs[] = {
      {"x", nxrt::Tensor::Borrow(DataType::kFloat32, dims, x.data(), x.size() * sizeof(float))}};
  auto outputs = session.Run(inputs, {});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  ASSERT_EQ((*outputs)[0].shape(), (std::vector<int64_t>{dims[0], kMaps, dims[2], dims[3]}));
  const auto y = (*outputs)[0].values<float>();
  const std::vector<float> w = Wave(kMaps * kChannels, 0.77, 0.3);
  const std::vector<float> bias = Wave(kMaps, 1.3, 0.5);
  for (int64_t n = 0; n < dims[0]; ++n) {
    for (int64_t m = 0; m < kMaps; ++m) {
      for (int64_t p = 0; p < pixels; ++p) {
        double sum = bias[m];
        for (int64_t c = 0; c < kChannels; ++c) {
          sum += static_cast<double>(w[m * kChannels + c]) * x[(n * kChannels + c) * pixels + p];
        }
        if (relu && sum < 0) sum = 0;
        ASSERT_NEAR(y[(n * kMaps + m) * pixels + p], sum, 1e-5 * (1 + std::abs(sum)))
            << "image " << n << ", map " << m << ", pixel " << p;
      }
    }
  }
}

TEST(ShapeGeneralKernels, APointwiseConvServesEveryBatchAndImageSize) {
  auto session = SessionOf(PointwiseConv(false));
  ASSERT_NE(session, nullptr);
  const std::vector<std::vector<int64_t>> shapes = {
      {1, kChannels, 5, 7}, {2, kChannels, 3, 11}, {1, kChannels, 6, 1}, {1, kChannels, 5, 7}};
  for (const auto& dims : shapes) ExpectPointwiseValues(*session, false, dims);
  const nxrt::KernelCacheStats stats = session->kernel_cache_stats();
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.shape_general_entries, 1u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.evictions, 0u);
}

TEST(ShapeGeneralKernels, APointwiseConvWithItsReluServesEveryImageSize) {
  auto session = SessionOf(PointwiseConv(true));
  ASSERT_NE(session, nullptr);
  for (int64_t width : {9, 4, 17}) ExpectPointwiseValues(*session, true, {1, kChannels, 2, width});
  const nxrt::KernelCacheStats stats = session->kernel_cache_stats();
  EXPECT_EQ(stats.entries, stats.shape_general_entries);
  EXPECT_EQ(stats.misses, stats.entries);
}

// A shape seen three calls in a row is planned on oneDNN's convolution too,
// timed against the product and the faster kept: every call, the trial's
// included, gives the same values, and the one kernel keeps serving.
TEST(ShapeGeneralKernels, APointwiseConvAtARepeatedShapeKeepsItsValues) {
  auto session = SessionOf(PointwiseConv(true));
  ASSERT_NE(session, nullptr);
  for (int call = 0; call < 6; ++call) ExpectPointwiseValues(*session, true, {1, kChannels, 5, 7});
  ExpectPointwiseValues(*session, true, {2, kChannels, 3, 9});
  for (int call = 0; call < 5; ++call) ExpectPointwiseValues(*session, true, {1, kChannels, 5, 7});
  const nxrt::KernelCacheStats stats = session->kernel_cache_stats();
  EXPECT_EQ(stats.entries, stats.shape_general_entries);
  EXPECT_EQ(stats.misses, stats.entries);
}

// An integer Abs runs on the EP's own loop (oneDNN takes only floats), which
// reads the element count from the call's tensor.
TEST(ShapeGeneralKernels, AnIntegerUnaryKernelServesEveryShapeOfItsRank) {
  IrModelBuilder b(13, "abs");
  const auto x = b.Input("x", std::nullopt, DataType::kInt32);
  b.Output(b.Tensor("Abs", {x}, "y", DataType::kInt32));
  auto session = SessionOf(b.Take());
  ASSERT_NE(session, nullptr);
  for (const std::vector<int64_t>& dims :
       std::vector<std::vector<int64_t>>{{2, 3}, {5, 1}, {0, 4}}) {
    std::vector<int32_t> values(dims[0] * dims[1]);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int32_t>(i * 7) - 12;
    const nxrt::NamedTensor inputs[] = {
        {"x", nxrt::Tensor::Borrow(DataType::kInt32, dims, values.data(),
                                   values.size() * sizeof(int32_t))}};
    auto outputs = session->Run(inputs, {});
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    ASSERT_EQ((*outputs)[0].shape(), dims);
    const auto y = (*outputs)[0].values<int32_t>();
    for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(y[i], std::abs(values[i]));
  }
  const nxrt::KernelCacheStats stats = session->kernel_cache_stats();
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.shape_general_entries, 1u);
  EXPECT_EQ(stats.misses, 1u);
}

// Shape, Identity and Reshape read the extents of the call's input.
TEST(ShapeGeneralKernels, ShapeIdentityAndReshapeServeEveryShapeOfTheirRanks) {
  IrModelBuilder b(13, "relabel");
  const auto x = b.SymbolicInput("x", {"n", 6});
  const auto target = b.Int64s("target", {2}, {-1, 3});
  b.Output(b.Tensor("Shape", {x}, "shape", DataType::kInt64));
  b.Output(b.Tensor("Identity", {x}, "same"));
  b.Output(b.Tensor("Reshape", {x, target}, "reshaped"));
  auto session = SessionOf(b.Take());
  ASSERT_NE(session, nullptr);
  for (int64_t n : {2, 5, 1, 5}) {
    std::vector<float> values = Wave(n * 6, 0.3, 1.0);
    const nxrt::NamedTensor inputs[] = {
        {"x", nxrt::Tensor::Borrow(DataType::kFloat32, {n, 6}, values.data(),
                                   values.size() * sizeof(float))}};
    auto outputs = session->Run(inputs, {});
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    const auto shape = (*outputs)[0].values<int64_t>();
    EXPECT_EQ(std::vector<int64_t>(shape.begin(), shape.end()), (std::vector<int64_t>{n, 6}));
    EXPECT_EQ((*outputs)[1].shape(), (std::vector<int64_t>{n, 6}));
    EXPECT_EQ((*outputs)[2].shape(), (std::vector<int64_t>{n * 2, 3}));
    for (size_t o : {size_t{1}, size_t{2}}) {
      const auto y = (*outputs)[o].values<float>();
      EXPECT_EQ(std::vector<float>(y.begin(), y.end()), values) << "output " << o << ", n " << n;
    }
  }
  const nxrt::KernelCacheStats stats = session->kernel_cache_stats();
  EXPECT_EQ(stats.shape_general_entries, 3u);
  EXPECT_EQ(stats.entries, 3u);
  EXPECT_EQ(stats.misses, 3u);
}

// Transpose, Slice and Clip work their copies out again at each new shape.
TEST(ShapeGeneralKernels, TransposeSliceAndClipServeEveryShapeOfTheirRanks) {
  IrModelBuilder b(13, "views");
  const auto x = b.SymbolicInput("x", {"n", 6});
  const auto starts = b.Int64s("starts", {1}, {1});
  const auto ends = b.Int64s("ends", {1}, {4});
  const auto axes = b.Int64s("axes", {1}, {1});
  const auto low = b.Floats("low", {}, {-0.5f});
  const auto high = b.Floats("high", {}, {0.5f});
  b.Output(b.Tensor("Transpose", {x}, "transposed", DataType::kFloat32,
                    {IntsAttribute("perm", {1, 0})}));
  b.Output(b.Tensor("Slice", {x, starts, ends, axes}, "sliced"));
  b.Output(b.Tensor("Clip", {x, low, high}, "clipped"));
  auto session = SessionOf(b.Take());
  ASSERT_NE(session, nullptr);
  for (int64_t n : {3, 1, 7, 3}) {
    std::vector<float> values = Wave(n * 6, 0.7, 1.0);
    const nxrt::NamedTensor inputs[] = {
        {"x", nxrt::Tensor::Borrow(DataType::kFloat32, {n, 6}, values.data(),
                                   values.size() * sizeof(float))}};
    auto outputs = session->Run(inputs, {});
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    ASSERT_EQ((*outputs)[0].shape(), (std::vector<int64_t>{6, n}));
    ASSERT_EQ((*outputs)[1].shape(), (std::vector<int64_t>{n, 3}));
    ASSERT_EQ((*outputs)[2].shape(), (std::vector<int64_t>{n, 6}));
    const auto transposed = (*outputs)[0].values<float>();
    const auto sliced = (*outputs)[1].values<float>();
    const auto clipped = (*outputs)[2].values<float>();
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < 6; ++j) {
        const float v = values[i * 6 + j];
        EXPECT_EQ(transposed[j * n + i], v) << "n " << n;
        EXPECT_EQ(clipped[i * 6 + j], std::clamp(v, -0.5f, 0.5f)) << "n " << n;
        if (j >= 1 && j < 4) {
          EXPECT_EQ(sliced[i * 3 + j - 1], v) << "n " << n;
        }
      }
    }
  }
  const nxrt::KernelCacheStats stats = session->kernel_cache_stats();
  EXPECT_EQ(stats.entries, 3u);
  EXPECT_EQ(stats.shape_general_entries, 3u);
  EXPECT_EQ(stats.misses, 3u);
}

// A MatMul of two graph inputs meets new row counts, inner and outer
// extents: it plans again where its plan no longer serves them.
TEST(ShapeGeneralKernels, AMatMulOfTwoInputsServesNewRowsInnerAndOuterExtents) {
  IrModelBuilder b(13, "matmul");
  const auto a = b.SymbolicInput("a", {"m", "k"});
  const auto w = b.SymbolicInput("b", {"k", "n"});
  b.Output(b.Tensor("MatMul", {a, w}, "y"));
  auto session = SessionOf(b.Take());
  ASSERT_NE(session, nullptr);
  for (const auto& [m, k, n] : std::vector<std::array<int64_t, 3>>{
           {4, 3, 5}, {1, 3, 5}, {9, 3, 5}, {6, 7, 2}, {1, 7, 2}, {4, 3, 5}}) {
    std::vector<float> av = Wave(m * k, 0.29, 1.0);
    std::vector<float> bv = Wave(k * n, 0.53, 1.0);
    const nxrt::NamedTensor inputs[] = {
        {"a", nxrt::Tensor::Borrow(DataType::kFloat32, {m, k}, av.data(), av.size() * 4)},
        {"b", nxrt::Tensor::Borrow(DataType::kFloat32, {k, n}, bv.data(), bv.size() * 4)}};
    auto outputs = session->Run(inputs, {});
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    ASSERT_EQ((*outputs)[0].shape(), (std::vector<int64_t>{m, n}));
    const auto y = (*outputs)[0].values<float>();
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) sum += static_cast<double>(av[i * k + p]) * bv[p * n + j];
        ASSERT_NEAR(y[i * n + j], sum, 1e-5)
            << m << "x" << k << "x" << n << " at " << i << "," << j;
      }
    }
  }
  const nxrt::KernelCacheStats stats = session->kernel_cache_stats();
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.shape_general_entries, 1u);
  EXPECT_EQ(stats.misses, 1u);
}

constexpr int64_t kVocabulary = 16;
constexpr int64_t kWidth = 8;
constexpr int64_t kHidden = 12;

// A decoder step's kinds of node: ids [1, s] -> Gather (embedding) ->
// MatMul (constant B) + bias -> Concat onto past [1, p, 12] -> ReduceSum
// over the cache -> added back to every row, Softmax-free so the values
// are exact to compare; then Reshape to [s, 12] and Cast to double.
nxrt::graph::Graph DecoderLikeBlock() {
  IrModelBuilder b(13, "decoder_like");
  const auto ids = b.Input("ids", std::nullopt, DataType::kInt64);
  const auto past = b.SymbolicInput("past", {1, "p", kHidden});
  const auto embedding =
      b.Floats("embedding", {kVocabulary, kWidth}, Wave(kVocabulary * kWidth, 0.61, 1.0));
  const auto w = b.Floats("w", {kWidth, kHidden}, Wave(kWidth * kHidden, 0.37, 0.5));
  const auto bias = b.Floats("bias", {kHidden}, Wave(kHidden, 1.1, 0.2));
  const auto axes = b.Int64s("axes", {1}, {1});
  const auto rows = b.Int64s("rows", {2}, {-1, kHidden});
  const auto x = b.Tensor("Gather", {embedding, ids}, "x");
  const auto h = b.Tensor("Add", {b.Tensor("MatMul", {x, w}, "product"), bias}, "h");
  const auto present =
      b.Tensor("Concat", {past, h}, "present", DataType::kFloat32, {IntAttribute("axis", 1)});
  const auto sum = b.Tensor("ReduceSum", {present, axes}, "sum");
  const auto y = b.Tensor("Mul", {h, sum}, "y");
  b.Output(present);
  b.Output(b.Tensor("Cast", {b.Tensor("Reshape", {y, rows}, "flat")}, "wide", DataType::kFloat64,
                    {IntAttribute("to", 11)}));
  return b.Take();
}

std::vector<nxrt::Tensor> RunBlock(nxrt::Session& session, int64_t sequence, int64_t past_length) {
  std::vector<int64_t> ids(sequence);
  for (int64_t i = 0; i < sequence; ++i) ids[i] = (i * 5 + past_length * 3) % kVocabulary;
  std::vector<float> past = Wave(past_length * kHidden, 0.23, 0.7);
  const nxrt::NamedTensor inputs[] = {
      {"ids", nxrt::Tensor::Borrow(DataType::kInt64, {1, sequence}, ids.data(),
                                   ids.size() * sizeof(int64_t))},
      {"past", nxrt::Tensor::Borrow(DataType::kFloat32, {1, past_length, kHidden}, past.data(),
                                    past.size() * sizeof(float))}};
  auto outputs = session.Run(inputs, {});
  EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
  return outputs.ok() ? std::move(outputs).value() : std::vector<nxrt::Tensor>{};
}

// One session meets prompts and single-token steps over a growing cache;
// each run gives what a session made for that shape alone gives, and every
// node keeps one kernel.
// Equal batches of heads ([g, h, m, k] x [g, h, k, n]) run as one batched
// product whose every extent is read at run time.
TEST(ShapeGeneralKernels, ABatchedMatMulOfEqualBatchesServesEveryExtent) {
  IrModelBuilder b(13, "batched");
  const auto a = b.SymbolicInput("a", {"g", "h", "m", "k"});
  const auto w = b.SymbolicInput("b", {"g", "h", "k", "n"});
  b.Output(b.Tensor("MatMul", {a, w}, "y"));
  auto session = SessionOf(b.Take());
  ASSERT_NE(session, nullptr);
  for (const auto& [g, h, m, k, n] : std::vector<std::array<int64_t, 5>>{{2, 4, 6, 32, 6},
                                                                         {2, 4, 6, 32, 14},
                                                                         {1, 3, 1, 8, 5},
                                                                         {3, 2, 7, 5, 9},
                                                                         {2, 4, 6, 32, 6}}) {
    std::vector<float> av = Wave(g * h * m * k, 0.29, 1.0);
    std::vector<float> bv = Wave(g * h * k * n, 0.53, 1.0);
    const nxrt::NamedTensor inputs[] = {
        {"a", nxrt::Tensor::Borrow(DataType::kFloat32, {g, h, m, k}, av.data(), av.size() * 4)},
        {"b", nxrt::Tensor::Borrow(DataType::kFloat32, {g, h, k, n}, bv.data(), bv.size() * 4)}};
    auto outputs = session->Run(inputs, {});
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    ASSERT_EQ((*outputs)[0].shape(), (std::vector<int64_t>{g, h, m, n}));
    const auto y = (*outputs)[0].values<float>();
    for (int64_t item = 0; item < g * h; ++item) {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t p = 0; p < k; ++p) {
            sum += static_cast<double>(av[(item * m + i) * k + p]) * bv[(item * k + p) * n + j];
          }
          ASSERT_NEAR(y[(item * m + i) * n + j], sum, 1e-5)
              << "item " << item << " at " << i << "," << j;
        }
      }
    }
  }
  const nxrt::KernelCacheStats stats = session->kernel_cache_stats();
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.shape_general_entries, 1u);
  EXPECT_EQ(stats.misses, 1u);
}

TEST(ShapeGeneralKernels, ADecoderLikeBlockKeepsOneKernelPerNodeAcrossPromptsAndSteps) {
  auto session = SessionOf(DecoderLikeBlock());
  ASSERT_NE(session, nullptr);
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{5, 0}, {1, 5}, {1, 6}, {7, 0},
                                                           {1, 7}, {3, 2}, {5, 0}};
  for (const auto& [sequence, past_length] : shapes) {
    const std::vector<nxrt::Tensor> shared = RunBlock(*session, sequence, past_length);
    auto alone_session = SessionOf(DecoderLikeBlock());
    ASSERT_NE(alone_session, nullptr);
    const std::vector<nxrt::Tensor> alone = RunBlock(*alone_session, sequence, past_length);
    ASSERT_EQ(shared.size(), 2u);
    ASSERT_EQ(alone.size(), 2u);
    ASSERT_EQ(shared[0].shape(), (std::vector<int64_t>{1, past_length + sequence, kHidden}));
    ASSERT_EQ(shared[1].shape(), (std::vector<int64_t>{sequence, kHidden}));
    const auto present = shared[0].values<float>();
    const auto present_alone = alone[0].values<float>();
    EXPECT_EQ(std::vector<float>(present.begin(), present.end()),
              std::vector<float>(present_alone.begin(), present_alone.end()))
        << "sequence " << sequence << ", past " << past_length;
    const auto wide = shared[1].values<double>();
    const auto wide_alone = alone[1].values<double>();
    EXPECT_EQ(std::vector<double>(wide.begin(), wide.end()),
              std::vector<double>(wide_alone.begin(), wide_alone.end()))
        << "sequence " << sequence << ", past " << past_length;
  }
  const nxrt::KernelCacheStats stats = session->kernel_cache_stats();
  EXPECT_EQ(stats.entries, stats.shape_general_entries);
  EXPECT_EQ(stats.misses, stats.entries);
  EXPECT_EQ(stats.evictions, 0u);
}

}  // namespace
}  // namespace nxrt_test
