// Device-graph segments on the mock EP, whose captures record the compute
// calls and replay them for real: capture after a warm-up run, replay with
// correct results, eager fallback and recapture when shapes or bound
// buffers change, separate slots, and segments whose kernels cannot be
// captured.
#include <gtest/gtest.h>

#include "session/mock_session_support.hpp"

namespace {

using nxrt::DeviceGraphSlot;
using nxrt::EagerFallbackReason;
using nxrt_test::Chain;
using nxrt_test::ChainExpected;
using nxrt_test::Floats;

class DeviceGraphs : public ::testing::Test {
 protected:
  void Create(std::vector<std::pair<std::string, std::string>> mock_options = {}) {
    log_ = nxrt_test::TestLogId();
    auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), Chain(),
                                         nxrt_test::MockOptions(log_, std::move(mock_options)));
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    session_ = std::move(session).value();
  }

  // Runs on `slot` with x bound to `x` (shape [rows, 4]) and checks y.
  void RunAndCheck(DeviceGraphSlot slot, std::vector<float>& x) {
    const int64_t rows = static_cast<int64_t>(x.size() / 4);
    std::vector<nxrt::NamedTensor> inputs{
        {"x", nxrt::Tensor::Borrow(nxrt::DataType::kFloat32, {rows, 4}, x.data(),
                                   x.size() * sizeof(float))}};
    Status status = session_->Run(slot, inputs, {}, outputs_);
    ASSERT_TRUE(status.ok()) << status.ToString();
    ASSERT_EQ(outputs_.size(), 1u);
    EXPECT_EQ(nxrt_test::ValuesOf(outputs_[0]), ChainExpected(x));
  }

  using Status = nxrt::Status;
  std::string log_;
  std::unique_ptr<nxrt::Session> session_;
  std::vector<nxrt::Tensor> outputs_;
};

TEST_F(DeviceGraphs, CapturesAfterAWarmUpRunAndReplaysWithFreshInputs) {
  Create();
  std::vector<float> x{1, 2, 3, 4};
  RunAndCheck(DeviceGraphSlot::kPrimary, x);
  auto counters = session_->device_graph_counters();
  EXPECT_EQ(counters.captures, 0u);
  EXPECT_EQ(counters.fallbacks(EagerFallbackReason::kWarmingUp), 1u);

  x = {-1, 0.5f, 3, 7};
  RunAndCheck(DeviceGraphSlot::kPrimary, x);
  counters = session_->device_graph_counters();
  EXPECT_EQ(counters.captures, 1u);
  EXPECT_EQ(counters.replays, 1u);

  // The mock recorded three calls in one capture and replays them.
  auto& mock = nxrt_test::MockLibrary::Get();
  mock.Clear(log_);
  for (int step = 0; step < 5; ++step) {
    x = {static_cast<float>(step), -2, 0.25f * step, 9};
    RunAndCheck(DeviceGraphSlot::kPrimary, x);
  }
  counters = session_->device_graph_counters();
  EXPECT_EQ(counters.captures, 1u);
  EXPECT_EQ(counters.replays, 6u);
  const auto calls = mock.CallLog(log_);
  EXPECT_EQ(nxrt_test::CountPrefix(calls, "replay"), 5u);
  EXPECT_EQ(nxrt_test::CountPrefix(calls, "compute"), 0u);
}

TEST_F(DeviceGraphs, RunsWithoutASlotStayEager) {
  Create();
  std::vector<float> x{1, 2, 3, 4};
  std::vector<nxrt::NamedTensor> inputs{{"x", Floats({1, 4}, x)}};
  for (int i = 0; i < 3; ++i) {
    auto outputs = session_->Run(inputs);
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    EXPECT_EQ(nxrt_test::ValuesOf((*outputs)[0]), ChainExpected(x));
  }
  const auto counters = session_->device_graph_counters();
  EXPECT_EQ(counters.captures + counters.replays, 0u);
}

TEST_F(DeviceGraphs, EagerRunsBetweenReplaysKeepTheCapture) {
  Create();
  std::vector<float> x{1, 2, 3, 4};
  RunAndCheck(DeviceGraphSlot::kPrimary, x);
  RunAndCheck(DeviceGraphSlot::kPrimary, x);
  std::vector<float> other{-3, 5, -7, 9};
  std::vector<nxrt::NamedTensor> inputs{{"x", nxrt_test::Floats({1, 4}, other)}};
  auto eager = session_->Run(inputs);
  ASSERT_TRUE(eager.ok()) << eager.status().ToString();
  EXPECT_EQ(nxrt_test::ValuesOf((*eager)[0]), ChainExpected(other));
  x = {8, -1, 0.5f, 2};
  RunAndCheck(DeviceGraphSlot::kPrimary, x);
  const auto counters = session_->device_graph_counters();
  EXPECT_EQ(counters.captures, 1u);
  EXPECT_EQ(counters.replays, 2u);
}

TEST_F(DeviceGraphs, ShapeChangeFallsBackEagerlyThenRecaptures) {
  Create();
  std::vector<float> x{1, 2, 3, 4};
  RunAndCheck(DeviceGraphSlot::kPrimary, x);
  RunAndCheck(DeviceGraphSlot::kPrimary, x);
  ASSERT_EQ(session_->device_graph_counters().captures, 1u);

  std::vector<float> two_rows{1, 2, 3, 4, -5, 6, -7, 8};
  RunAndCheck(DeviceGraphSlot::kPrimary, two_rows);
  auto counters = session_->device_graph_counters();
  EXPECT_EQ(counters.fallbacks(EagerFallbackReason::kShapeChanged), 1u);
  EXPECT_GE(counters.resets, 1u);
  EXPECT_EQ(counters.captures, 1u);

  RunAndCheck(DeviceGraphSlot::kPrimary, two_rows);
  counters = session_->device_graph_counters();
  EXPECT_EQ(counters.captures, 2u);
  two_rows[0] = 42;
  RunAndCheck(DeviceGraphSlot::kPrimary, two_rows);
  EXPECT_EQ(session_->device_graph_counters().captures, 2u);
  EXPECT_EQ(session_->device_graph_counters().replays, 3u);
}

TEST_F(DeviceGraphs, RebindingAnInputBufferFallsBackEagerly) {
  Create();
  std::vector<float> x{1, 2, 3, 4};
  RunAndCheck(DeviceGraphSlot::kPrimary, x);
  RunAndCheck(DeviceGraphSlot::kPrimary, x);
  ASSERT_EQ(session_->device_graph_counters().captures, 1u);

  // Same shape, another buffer: replaying would read the old one.
  std::vector<float> moved{5, -6, 7, -8};
  RunAndCheck(DeviceGraphSlot::kPrimary, moved);
  const auto counters = session_->device_graph_counters();
  EXPECT_EQ(counters.fallbacks(EagerFallbackReason::kAddressChanged), 1u);
  EXPECT_EQ(counters.captures, 1u);
  EXPECT_EQ(counters.resets, 1u);
}

TEST_F(DeviceGraphs, SlotsCaptureSeparatelyAndSettleWhenAlternating) {
  Create();
  std::vector<float> one{1, 2, 3, 4};
  std::vector<float> two{1, 2, 3, 4, 5, 6, 7, 8};
  // Buffers grow to the larger shape once; after that both slots keep their
  // captures while decode and verification steps alternate.
  for (int i = 0; i < 3; ++i) {
    RunAndCheck(DeviceGraphSlot::kPrimary, one);
    RunAndCheck(DeviceGraphSlot::kVerify, two);
  }
  const auto settled = session_->device_graph_counters();
  EXPECT_EQ(settled.captures, 2u);
  for (int i = 0; i < 4; ++i) {
    one[0] = static_cast<float>(i);
    two[5] = static_cast<float>(-i);
    RunAndCheck(DeviceGraphSlot::kPrimary, one);
    RunAndCheck(DeviceGraphSlot::kVerify, two);
  }
  const auto counters = session_->device_graph_counters();
  EXPECT_EQ(counters.captures, 2u);
  EXPECT_EQ(counters.replays, settled.replays + 8);
  EXPECT_EQ(counters.resets, settled.resets);
}

TEST_F(DeviceGraphs, KernelsThatAreNotCaptureSafeRunEagerly) {
  Create({{"capture_safe", "0"}});
  std::vector<float> x{1, 2, 3, 4};
  for (int i = 0; i < 3; ++i) RunAndCheck(DeviceGraphSlot::kPrimary, x);
  const auto counters = session_->device_graph_counters();
  EXPECT_EQ(counters.captures, 0u);
  EXPECT_EQ(counters.fallbacks(EagerFallbackReason::kNotCaptureSafe), 3u);
}

TEST_F(DeviceGraphs, ProviderWithoutDeviceGraphsNeverCaptures) {
  Create({{"device_graphs", "0"}});
  std::vector<float> x{1, 2, 3, 4};
  for (int i = 0; i < 3; ++i) RunAndCheck(DeviceGraphSlot::kPrimary, x);
  const auto counters = session_->device_graph_counters();
  EXPECT_EQ(counters.captures + counters.replays, 0u);
}

TEST_F(DeviceGraphs, CaptureReportNamesTheEligibleNodes) {
  Create();
  const auto& report = session_->capture_report();
  EXPECT_EQ(report.node_count, 3u);
  EXPECT_EQ(report.eligible_count, 3u);
  for (const auto& placement : session_->placements()) EXPECT_TRUE(placement.capture_eligible);
}

}  // namespace
