// Run from several threads on one session gives exactly the results of the
// same runs made one after another. Runs of a session are serialised, so
// this also checks that nothing a run touches escapes the session's lock
// (the tsan preset runs it under ThreadSanitizer).
#include <gtest/gtest.h>

#include <thread>

#include "session/mock_session_support.hpp"

namespace {

constexpr int kThreads = 4;
constexpr int kRunsPerThread = 40;

// Each run has its own input, some at other shapes than the rest.
std::vector<float> InputFor(int thread, int run) {
  const size_t rows = 1 + static_cast<size_t>((thread + run) % 3);
  std::vector<float> x(rows * 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(thread * 100 + run) - i * 0.5f;
  return x;
}

nxrt::Result<std::vector<float>> RunOnce(nxrt::Session& session, std::vector<float>& x,
                                         std::optional<nxrt::DeviceGraphSlot> slot) {
  const int64_t rows = static_cast<int64_t>(x.size() / 4);
  std::vector<nxrt::NamedTensor> inputs{
      {"x", nxrt::Tensor::Borrow(nxrt::DataType::kFloat32, {rows, 4}, x.data(),
                                 x.size() * sizeof(float))}};
  std::vector<nxrt::Tensor> outputs;
  nxrt::Status status =
      slot ? session.Run(*slot, inputs, {}, outputs) : session.Run(inputs, {}, outputs);
  if (!status.ok()) return status;
  return nxrt_test::ValuesOf(outputs[0]);
}

class ConcurrentRuns : public ::testing::TestWithParam<bool> {};

TEST_P(ConcurrentRuns, EqualSerialRuns) {
  const bool on_slot = GetParam();
  const std::optional<nxrt::DeviceGraphSlot> slot =
      on_slot ? std::optional(nxrt::DeviceGraphSlot::kPrimary) : std::nullopt;
  auto serial = nxrt::Session::Create(nxrt_test::TestEnvironment(), nxrt_test::Chain(),
                                      nxrt_test::MockOptions(nxrt_test::TestLogId() + ".serial"));
  auto shared = nxrt::Session::Create(nxrt_test::TestEnvironment(), nxrt_test::Chain(),
                                      nxrt_test::MockOptions(nxrt_test::TestLogId() + ".shared"));
  ASSERT_TRUE(serial.ok() && shared.ok());

  std::vector<std::vector<std::vector<float>>> expected(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    for (int r = 0; r < kRunsPerThread; ++r) {
      std::vector<float> x = InputFor(t, r);
      auto y = RunOnce(**serial, x, slot);
      ASSERT_TRUE(y.ok()) << y.status().ToString();
      expected[t].push_back(*y);
    }
  }

  std::vector<std::vector<std::vector<float>>> got(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRunsPerThread; ++r) {
        std::vector<float> x = InputFor(t, r);
        auto y = RunOnce(**shared, x, slot);
        if (!y.ok()) {
          errors[t] = y.status().ToString();
          return;
        }
        got[t].push_back(*y);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(errors[t].empty()) << errors[t];
    EXPECT_EQ(got[t], expected[t]) << "thread " << t;
  }
}

INSTANTIATE_TEST_SUITE_P(EagerAndOnASlot, ConcurrentRuns, ::testing::Bool());

}  // namespace
