// Kernels that read their extents at compute time serve every shape of their
// node at its ranks: the session makes one, and a new shape is a hit, with
// the values a kernel made for that shape would give.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "cpu_environment.hpp"
#include "ir_model_builder.hpp"
#include "nxrt/session.hpp"

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

std::vector<float> Wave(size_t count, double step, double scale) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = static_cast<float>(scale * std::sin(step * i + 0.3));
  return v;
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

// Shape and Identity read the extents of the call's input; Reshape's kernel
// is made for its input shape.
TEST(ShapeGeneralKernels, ShapeAndIdentityServeEveryShapeOfTheirRanks) {
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
  EXPECT_EQ(stats.shape_general_entries, 2u);
  EXPECT_EQ(stats.entries, 2u + 3u);  // Reshape at n = 2, 5 and 1
  EXPECT_EQ(stats.misses, 2u + 3u);
}

}  // namespace
}  // namespace nxrt_test
