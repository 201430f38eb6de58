// The session's kernel cache stays bounded per node however many input
// shapes it sees, and an eviction resets the device graphs before the
// evicted kernel is destroyed.
#include <gtest/gtest.h>

#include <algorithm>

#include "session/mock_session_support.hpp"

namespace {

using nxrt_test::Chain;

nxrt::Status RunRows(nxrt::Session& session, std::optional<nxrt::DeviceGraphSlot> slot,
                     std::vector<float>& x, std::vector<nxrt::Tensor>& outputs) {
  const int64_t rows = static_cast<int64_t>(x.size() / 4);
  std::vector<nxrt::NamedTensor> inputs{
      {"x", nxrt::Tensor::Borrow(nxrt::DataType::kFloat32, {rows, 4}, x.data(),
                                 x.size() * sizeof(float))}};
  return slot ? session.Run(*slot, inputs, {}, outputs) : session.Run(inputs, {}, outputs);
}

TEST(KernelCacheBound, ThousandDistinctLengthsKeepAtMostTheBoundPerNode) {
  constexpr size_t kBound = 4;
  constexpr size_t kNodes = 3;
  nxrt::SessionOptions options = nxrt_test::MockOptions(nxrt_test::TestLogId());
  options.kernel_cache_variants_per_node = kBound;
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), Chain(), options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  std::vector<nxrt::Tensor> outputs;
  for (int rows = 1; rows <= 1000; ++rows) {
    std::vector<float> x(static_cast<size_t>(rows) * 4, 0.5f);
    x[0] = static_cast<float>(rows);
    nxrt::Status status = RunRows(**session, std::nullopt, x, outputs);
    ASSERT_TRUE(status.ok()) << status.ToString();
    ASSERT_LE((*session)->kernel_cache_stats().entries, kBound * kNodes) << "after " << rows;
    ASSERT_EQ(outputs[0].values<float>()[0], std::max(0.0f, (rows + 1.0f) * rows));
  }
  const nxrt::KernelCacheStats stats = (*session)->kernel_cache_stats();
  EXPECT_EQ(stats.entries, kBound * kNodes);
  EXPECT_EQ(stats.misses, 1000 * kNodes);
  EXPECT_EQ(stats.evictions, 1000 * kNodes - kBound * kNodes);
}

TEST(KernelCacheBound, KernelsThatServeOtherShapesAreMadeOncePerNode) {
  constexpr size_t kNodes = 3;
  nxrt::SessionOptions options =
      nxrt_test::MockOptions(nxrt_test::TestLogId(), {{"any_shape", "1"}});
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), Chain(), options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  std::vector<nxrt::Tensor> outputs;
  for (int rows = 1; rows <= 200; ++rows) {
    std::vector<float> x(static_cast<size_t>(rows) * 4, 0.5f);
    x[0] = static_cast<float>(rows);
    nxrt::Status status = RunRows(**session, std::nullopt, x, outputs);
    ASSERT_TRUE(status.ok()) << status.ToString();
    ASSERT_EQ(outputs[0].shape(), (std::vector<int64_t>{rows, 4}));
    ASSERT_EQ(outputs[0].values<float>()[0], std::max(0.0f, (rows + 1.0f) * rows));
  }
  const nxrt::KernelCacheStats stats = (*session)->kernel_cache_stats();
  EXPECT_EQ(stats.entries, kNodes);
  EXPECT_EQ(stats.shape_general_entries, kNodes);
  EXPECT_EQ(stats.misses, kNodes);
  EXPECT_EQ(stats.hits, 199 * kNodes);
  EXPECT_EQ(stats.evictions, 0u);
}

TEST(KernelCacheBound, RepeatedShapesHitThePreBoundPath) {
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), Chain(),
                                       nxrt_test::MockOptions(nxrt_test::TestLogId()));
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  std::vector<nxrt::Tensor> outputs;
  std::vector<float> x{1, 2, 3, 4};
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(RunRows(**session, std::nullopt, x, outputs).ok());
  const nxrt::KernelCacheStats stats = (*session)->kernel_cache_stats();
  EXPECT_EQ(stats.misses, 3u);
  EXPECT_EQ(stats.prebound_hits, 12u);
  EXPECT_EQ(stats.entries, 3u);
}

TEST(KernelCacheBound, EvictionResetsDeviceGraphsBeforeDestroyingTheKernel) {
  const std::string log = nxrt_test::TestLogId();
  nxrt::SessionOptions options = nxrt_test::MockOptions(log);
  options.kernel_cache_variants_per_node = 1;
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), Chain(), options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  std::vector<nxrt::Tensor> outputs;
  // Two rows first, so later one-row runs fit the grown buffers and only the
  // eviction, not a reallocation, can drop the capture.
  std::vector<float> two_rows{1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_TRUE(RunRows(**session, std::nullopt, two_rows, outputs).ok());
  std::vector<float> one_row{1, 2, 3, 4};
  ASSERT_TRUE(RunRows(**session, nxrt::DeviceGraphSlot::kPrimary, one_row, outputs).ok());
  ASSERT_TRUE(RunRows(**session, nxrt::DeviceGraphSlot::kPrimary, one_row, outputs).ok());
  ASSERT_EQ((*session)->device_graph_counters().captures, 1u);
  const uint64_t resets_before = (*session)->device_graph_counters().resets;

  ASSERT_TRUE(RunRows(**session, nxrt::DeviceGraphSlot::kPrimary, two_rows, outputs).ok());
  EXPECT_GT((*session)->device_graph_counters().resets, resets_before);
  EXPECT_GE((*session)->kernel_cache_stats().evictions, 3u);

  const auto calls = nxrt_test::MockLibrary::Get().CallLog(log);
  // The one-row Add kernel, which the capture recorded.
  std::string add_kernel;
  for (const std::string& line : calls) {
    if (line.rfind("create_kernel Add ", 0) == 0 && line.find("[1,4]") != std::string::npos) {
      add_kernel = line.substr(std::string("create_kernel Add ").size());
      add_kernel = add_kernel.substr(0, add_kernel.find(' '));
    }
  }
  ASSERT_FALSE(add_kernel.empty());
  const auto reset = std::find_if(calls.begin(), calls.end(),
                                  [](const std::string& l) { return l.rfind("reset t", 0) == 0; });
  const auto destroyed = std::find(calls.begin(), calls.end(), "destroy_kernel " + add_kernel);
  ASSERT_NE(reset, calls.end());
  ASSERT_NE(destroyed, calls.end());
  EXPECT_LT(reset - calls.begin(), destroyed - calls.begin())
      << "the captured graph must be reset before its kernel " << add_kernel << " is destroyed";
}

}  // namespace
