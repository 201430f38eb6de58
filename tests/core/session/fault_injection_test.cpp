// Every EP call that can fail (claim, create, prepare, adopt, compute,
// capture, replay, reset) surfaces as a clear error naming the failure, and
// the session stays usable: the next run gives correct results.
#include <gtest/gtest.h>

#include "session/mock_session_support.hpp"

namespace {

using nxrt::DeviceGraphSlot;
using nxrt_test::Chain;
using nxrt_test::ChainExpected;

class FaultInjection : public ::testing::Test {
 protected:
  void Create(std::vector<std::pair<std::string, std::string>> options) {
    auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), Chain(),
                                         nxrt_test::MockOptions(nxrt_test::TestLogId(), options));
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    session_ = std::move(session).value();
  }

  nxrt::Status Run(std::optional<DeviceGraphSlot> slot, std::vector<float>& x) {
    const int64_t rows = static_cast<int64_t>(x.size() / 4);
    std::vector<nxrt::NamedTensor> inputs{
        {"x", nxrt::Tensor::Borrow(nxrt::DataType::kFloat32, {rows, 4}, x.data(),
                                   x.size() * sizeof(float))}};
    nxrt::Status status =
        slot ? session_->Run(*slot, inputs, {}, outputs_) : session_->Run(inputs, {}, outputs_);
    if (status.ok()) {
      EXPECT_EQ(nxrt_test::ValuesOf(outputs_.at(0)), ChainExpected(x));
    }
    return status;
  }

  void ExpectFailure(const nxrt::Status& status, const std::string& point) {
    ASSERT_FALSE(status.ok()) << "the injected " << point << " failure did not surface";
    const std::string& message = status.message();
    EXPECT_NE(message.find("injected failure in " + point), std::string::npos) << message;
    EXPECT_NE(message.find("EP 'mock'"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }

  // Several runs that must all succeed, on the slot when given; fresh
  // values in the same buffer, so a slot can capture again.
  void ExpectUsable(std::optional<DeviceGraphSlot> slot) {
    for (int i = 0; i < 3; ++i) {
      x_ = {static_cast<float>(i), -1, 2, 5};
      nxrt::Status status = Run(slot, x_);
      ASSERT_TRUE(status.ok()) << status.ToString();
    }
  }

  std::unique_ptr<nxrt::Session> session_;
  std::vector<nxrt::Tensor> outputs_;
  std::vector<float> x_{1, 2, 3, 4};
};

TEST_F(FaultInjection, ClaimAtCreationFailsCreationClearly) {
  auto session =
      nxrt::Session::Create(nxrt_test::TestEnvironment(), Chain(),
                            nxrt_test::MockOptions(nxrt_test::TestLogId(), {{"fail_claim", "1"}}));
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find("injected failure in claim"), std::string::npos)
      << session.status().message();
  EXPECT_NE(session.status().message().find("s_Add"), std::string::npos)
      << session.status().message();
}

TEST_F(FaultInjection, ClaimRecheckAtRunTime) {
  // Three claims place the nodes; the fourth re-checks Add at concrete shapes.
  Create({{"fail_claim", "4"}});
  ExpectFailure(Run(std::nullopt, x_), "claim");
  ExpectUsable(std::nullopt);
}

TEST_F(FaultInjection, AnOutputBrokenByItsKernelIsCaughtBeforeItIsRead) {
  Create({{"break_output", "2"}});
  const nxrt::Status status = Run(std::nullopt, x_);
  ASSERT_FALSE(status.ok()) << "a kernel's broken output went unchecked";
  const std::string& message = status.message();
  EXPECT_NE(message.find("test.onnx: node"), std::string::npos) << message;
  EXPECT_NE(message.find(": output 0 holds 0 bytes, fewer than [1,4] needs; the EP's kernel "
                         "broke the plugin ABI, run the node on another EP"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  ExpectUsable(std::nullopt);
}

TEST_F(FaultInjection, CreateKernel) {
  Create({{"fail_create_kernel", "2"}});
  ExpectFailure(Run(std::nullopt, x_), "create_kernel");
  EXPECT_EQ(session_->kernel_cache_stats().entries, 1u);
  ExpectUsable(std::nullopt);
  EXPECT_EQ(session_->kernel_cache_stats().entries, 3u);
}

TEST_F(FaultInjection, Prepare) {
  Create({{"fail_prepare", "1"}});
  ExpectFailure(Run(std::nullopt, x_), "prepare");
  EXPECT_EQ(session_->kernel_cache_stats().entries, 0u);
  ExpectUsable(std::nullopt);
}

TEST_F(FaultInjection, AdoptOfASiblingsConstants) {
  Create({{"share", "1"}, {"fail_adopt", "1"}});
  ASSERT_TRUE(Run(std::nullopt, x_).ok());
  std::vector<float> two_rows{1, 2, 3, 4, 5, 6, 7, 8};
  ExpectFailure(Run(std::nullopt, two_rows), "adopt");
  ASSERT_TRUE(Run(std::nullopt, two_rows).ok());
  ExpectUsable(std::nullopt);
}

TEST_F(FaultInjection, Compute) {
  Create({{"fail_compute", "2"}});
  ExpectFailure(Run(std::nullopt, x_), "compute");
  ExpectUsable(std::nullopt);
}

TEST_F(FaultInjection, ComputeOfASettledNode) {
  // Runs 1 and 2 compute three nodes each; run 2 dispatches them settled,
  // and run 3 fails in its second node, settled too.
  Create({{"fail_compute", "8"}});
  ASSERT_TRUE(Run(std::nullopt, x_).ok());
  ASSERT_TRUE(Run(std::nullopt, x_).ok());
  ExpectFailure(Run(std::nullopt, x_), "compute");
  ExpectUsable(std::nullopt);
}

TEST_F(FaultInjection, ComputeWhileRecordingACapture) {
  // Runs 1 computes three nodes; run 2 records, and its second record fails.
  Create({{"fail_compute", "5"}});
  ASSERT_TRUE(Run(DeviceGraphSlot::kPrimary, x_).ok());
  ExpectFailure(Run(DeviceGraphSlot::kPrimary, x_), "compute");
  ExpectUsable(DeviceGraphSlot::kPrimary);
  EXPECT_EQ(session_->device_graph_counters().captures, 1u);
}

TEST_F(FaultInjection, BeginCapture) {
  Create({{"fail_begin_capture", "1"}});
  ASSERT_TRUE(Run(DeviceGraphSlot::kPrimary, x_).ok());
  ExpectFailure(Run(DeviceGraphSlot::kPrimary, x_), "begin_capture");
  ExpectUsable(DeviceGraphSlot::kPrimary);
  EXPECT_EQ(session_->device_graph_counters().captures, 1u);
}

TEST_F(FaultInjection, EndCapture) {
  Create({{"fail_end_capture", "1"}});
  ASSERT_TRUE(Run(DeviceGraphSlot::kPrimary, x_).ok());
  ExpectFailure(Run(DeviceGraphSlot::kPrimary, x_), "end_capture");
  // The capture left open by the failure is closed: eager runs compute.
  ExpectUsable(std::nullopt);
  ExpectUsable(DeviceGraphSlot::kPrimary);
  EXPECT_EQ(session_->device_graph_counters().captures, 1u);
}

TEST_F(FaultInjection, Replay) {
  Create({{"fail_replay", "1"}});
  ASSERT_TRUE(Run(DeviceGraphSlot::kPrimary, x_).ok());
  ExpectFailure(Run(DeviceGraphSlot::kPrimary, x_), "replay");
  ExpectUsable(DeviceGraphSlot::kPrimary);
  EXPECT_GE(session_->device_graph_counters().replays, 1u);
}

TEST_F(FaultInjection, ResetOnARebind) {
  Create({{"fail_reset", "1"}});
  ASSERT_TRUE(Run(DeviceGraphSlot::kPrimary, x_).ok());
  ASSERT_TRUE(Run(DeviceGraphSlot::kPrimary, x_).ok());
  ASSERT_EQ(session_->device_graph_counters().captures, 1u);
  std::vector<float> moved{4, 3, 2, 1};
  ExpectFailure(Run(DeviceGraphSlot::kPrimary, moved), "reset");
  ExpectUsable(DeviceGraphSlot::kPrimary);
}

TEST_F(FaultInjection, ResetBeforeABufferIsFreed) {
  Create({{"fail_reset", "1"}});
  ASSERT_TRUE(Run(DeviceGraphSlot::kPrimary, x_).ok());
  ASSERT_TRUE(Run(DeviceGraphSlot::kPrimary, x_).ok());
  ASSERT_EQ(session_->device_graph_counters().captures, 1u);
  // More rows: the value buffers grow, so the capture is reset first.
  std::vector<float> two_rows{1, 2, 3, 4, 5, 6, 7, 8};
  ExpectFailure(Run(DeviceGraphSlot::kPrimary, two_rows), "reset");
  ExpectUsable(DeviceGraphSlot::kPrimary);
}

}  // namespace
