// RunOptions stop a run between nodes: a set terminate flag or a passed
// deadline fails the run with kCancelled naming the node it stopped before,
// no kernel after that point computes, and the session's next run is as
// usual. Unset options change nothing.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>

#include "session/mock_session_support.hpp"

namespace {

using nxrt_test::Floats;

class RunOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = nxrt_test::TestLogId();
    session_ = nxrt_test::ChainSession(nxrt_test::MockOptions(log_));
    ASSERT_NE(session_, nullptr);
    nxrt_test::MockLibrary::Get().Clear(log_);
  }

  nxrt::Result<std::vector<nxrt::Tensor>> RunWith(const nxrt::RunOptions& options) {
    std::vector<nxrt::NamedTensor> inputs;
    inputs.push_back({"x", Floats({2, 4}, x_)});
    return session_->Run(inputs, {}, options);
  }

  void ExpectStoppedBeforeTheFirstNode(const nxrt::RunOptions& options, const std::string& why) {
    const auto outputs = RunWith(options);
    ASSERT_FALSE(outputs.ok());
    EXPECT_EQ(outputs.status().code(), nxrt::StatusCode::kCancelled);
    for (const std::string& part : {std::string("(Add)"), why, std::string("RunOptions")}) {
      EXPECT_NE(outputs.status().message().find(part), std::string::npos)
          << "missing '" << part << "' in: " << outputs.status().message();
    }
    const auto calls = nxrt_test::MockLibrary::Get().CallLog(log_);
    EXPECT_EQ(nxrt_test::CountPrefix(calls, "compute"), 0u);
    nxrt_test::MockLibrary::Get().Clear(log_);
    ExpectAnsweredWith({});
  }

  void ExpectAnsweredWith(const nxrt::RunOptions& options) {
    const auto outputs = RunWith(options);
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    EXPECT_EQ(nxrt_test::ValuesOf((*outputs)[0]), nxrt_test::ChainExpected(x_));
  }

  std::vector<float> x_{1, -2, 3, -4, 0.5f, 6, -7, 8};
  std::string log_;
  std::unique_ptr<nxrt::Session> session_;
};

TEST_F(RunOptionsTest, ASetTerminateFlagStopsTheRunBeforeAnyKernel) {
  std::atomic<bool> terminate{true};
  nxrt::RunOptions options;
  options.terminate = &terminate;
  ExpectStoppedBeforeTheFirstNode(options, "terminate flag");
}

TEST_F(RunOptionsTest, APassedDeadlineStopsTheRunBeforeAnyKernel) {
  nxrt::RunOptions options;
  options.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  ExpectStoppedBeforeTheFirstNode(options, "deadline passed");
}

TEST_F(RunOptionsTest, AClearFlagAndAFarDeadlineChangeNothing) {
  std::atomic<bool> terminate{false};
  nxrt::RunOptions options;
  options.terminate = &terminate;
  options.deadline = std::chrono::steady_clock::now() + std::chrono::hours(1);
  ExpectAnsweredWith(options);
  ExpectAnsweredWith(options);  // and again, now on settled dispatch
}

}  // namespace
