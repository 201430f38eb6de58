// Runs at the shapes of the previous run dispatch settled nodes straight to
// their kernels. What that must not lose: inputs the caller moves between
// runs, values whose shape depends on data rather than on the inputs'
// shapes, the pre-bound hit count, and a usable session after a failure.
#include <gtest/gtest.h>

#include <list>

#include "session/mock_session_support.hpp"

namespace {

using nxrt_test::ChainExpected;

std::unique_ptr<nxrt::Session> MockChainSession() {
  return nxrt_test::ChainSession(nxrt_test::MockOptions(nxrt_test::TestLogId()));
}

nxrt::Status RunChain(nxrt::Session& session, std::vector<float>& x,
                      std::vector<nxrt::Tensor>& outputs) {
  const int64_t rows = static_cast<int64_t>(x.size() / 4);
  std::vector<nxrt::NamedTensor> inputs{
      {"x", nxrt::Tensor::Borrow(nxrt::DataType::kFloat32, {rows, 4}, x.data(),
                                 x.size() * sizeof(float))}};
  return session.Run(inputs, {}, outputs);
}

TEST(SettledDispatch, ReadsInputsTheCallerMovedBetweenRuns) {
  auto session = MockChainSession();
  ASSERT_NE(session, nullptr);
  // Every run's input lives in a buffer of its own, all kept alive, so no
  // two runs share an address.
  std::list<std::vector<float>> inputs;
  std::vector<nxrt::Tensor> outputs;
  for (int run = 0; run < 6; ++run) {
    std::vector<float>& x = inputs.emplace_back(std::vector<float>{
        static_cast<float>(run), -3.0f + run, 0.5f * run, 7.0f - 2 * run, 1, 2, 3, -4.0f * run});
    ASSERT_TRUE(RunChain(*session, x, outputs).ok());
    EXPECT_EQ(nxrt_test::ValuesOf(outputs.at(0)), ChainExpected(x)) << "run " << run;
  }
}

TEST(SettledDispatch, CountsOnePreboundHitPerNodePerRun) {
  auto session = MockChainSession();
  ASSERT_NE(session, nullptr);
  std::vector<float> x{1, 2, 3, 4};
  std::vector<nxrt::Tensor> outputs;
  for (int warm = 0; warm < 2; ++warm) ASSERT_TRUE(RunChain(*session, x, outputs).ok());
  const nxrt::KernelCacheStats before = session->kernel_cache_stats();
  constexpr int kRuns = 5;
  for (int run = 0; run < kRuns; ++run) ASSERT_TRUE(RunChain(*session, x, outputs).ok());
  const nxrt::KernelCacheStats after = session->kernel_cache_stats();
  EXPECT_EQ(after.prebound_hits - before.prebound_hits, kRuns * 3u);
  EXPECT_EQ(after.hits, before.hits);
  EXPECT_EQ(after.misses, before.misses);
  EXPECT_EQ(after.entries, 3u);
}

TEST(SettledDispatch, FollowsShapesThatDependOnData) {
  // NonZero's output length depends on x's values, not its shape: the sum
  // after it, whose own output shape is fixed, must read each run's length
  // although x's shape never changes.
  nxrt::graph::Graph graph = nxrt_test::ModelBuilder(13)
                                 .Input("x", {int64_t{6}})
                                 .Node("NonZero", {"x"}, "where")
                                 .NodeOf("", "ReduceSum", {"where"}, {"sum"}, {{"keepdims", 1}})
                                 .Output("sum")
                                 .Build();
  nxrt::SessionOptions options;
  options.providers.push_back({"cpu", {}});
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), std::move(graph), options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  std::vector<nxrt::Tensor> outputs;
  const std::vector<std::vector<float>> runs = {
      {0, 1, 0, 2, 0, 3}, {5, 5, 5, 5, 5, 5}, {0, 0, 0, 0, 0, 0}, {0, 0, 9, 0, 0, 0}};
  for (int repeat = 0; repeat < 2; ++repeat) {
    for (const std::vector<float>& values : runs) {
      std::vector<nxrt::NamedTensor> inputs{{"x", nxrt_test::Floats({6}, values)}};
      ASSERT_TRUE((*session)->Run(inputs, {}, outputs).ok());
      int64_t expected = 0;
      for (size_t i = 0; i < values.size(); ++i) expected += values[i] != 0 ? int64_t(i) : 0;
      const nxrt::Tensor& sum = outputs.at(0);
      ASSERT_EQ(sum.shape(), (std::vector<int64_t>{1, 1}));
      EXPECT_EQ(sum.values<int64_t>()[0], expected);
    }
  }
}

}  // namespace
