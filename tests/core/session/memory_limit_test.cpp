// SessionOptions::memory_limit_bytes: a run whose values would hold more
// than the limit fails with kOutOfMemory naming the node, op and limit,
// before the memory is allocated; the session then runs smaller inputs, and
// what the failed run held is counted no longer.
#include <gtest/gtest.h>

#include <numeric>

#include "session/mock_session_support.hpp"

namespace {

using nxrt_test::Floats;

std::vector<float> Ramp(size_t count) {
  std::vector<float> values(count);
  std::iota(values.begin(), values.end(), -3.0f);
  return values;
}

std::unique_ptr<nxrt::Session> ChainSessionLimitedTo(size_t memory_limit_bytes) {
  nxrt::SessionOptions options = nxrt_test::MockOptions(nxrt_test::TestLogId());
  options.memory_limit_bytes = memory_limit_bytes;
  return nxrt_test::ChainSession(std::move(options));
}

nxrt::Result<std::vector<nxrt::Tensor>> RunRows(nxrt::Session& session, int64_t rows) {
  std::vector<nxrt::NamedTensor> inputs;
  inputs.push_back({"x", Floats({rows, 4}, Ramp(static_cast<size_t>(rows) * 4))});
  return session.Run(inputs);
}

void ExpectChainOf(const nxrt::Result<std::vector<nxrt::Tensor>>& outputs, int64_t rows) {
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_EQ(nxrt_test::ValuesOf((*outputs)[0]),
            nxrt_test::ChainExpected(Ramp(static_cast<size_t>(rows) * 4)));
}

TEST(MemoryLimit, ARunOverTheLimitIsRefusedNamingTheNodeAndTheLimit) {
  // 1,000 rows of 4 floats: 16,000 bytes a value, over a 4 KiB limit.
  auto session = ChainSessionLimitedTo(4096);
  ASSERT_NE(session, nullptr);
  const auto outputs = RunRows(*session, 1000);
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), nxrt::StatusCode::kOutOfMemory);
  for (const char* part : {"(Add)", "memory limit of 0.0 MiB", "memory_limit_bytes"}) {
    EXPECT_NE(outputs.status().message().find(part), std::string::npos)
        << "missing '" << part << "' in: " << outputs.status().message();
  }
  ExpectChainOf(RunRows(*session, 8), 8);
}

TEST(MemoryLimit, RefusedRunsLeaveNothingCounted) {
  auto session = ChainSessionLimitedTo(4096);
  ASSERT_NE(session, nullptr);
  for (int i = 0; i < 20; ++i) {
    ASSERT_FALSE(RunRows(*session, 1000).ok());
    // 60 rows: three values of 960 bytes, which fit only if nothing of the
    // refused runs is still counted.
    ExpectChainOf(RunRows(*session, 60), 60);
  }
}

TEST(MemoryLimit, NoLimitRunsTheSameModel) {
  auto session = ChainSessionLimitedTo(0);
  ASSERT_NE(session, nullptr);
  ExpectChainOf(RunRows(*session, 1000), 1000);
}

}  // namespace
