// Memory under shape churn: a session fed 1,000 runs, each at an input shape
// it has not seen, holds at most 1.25x the resident memory it held after its
// first run, at the largest of those shapes (docs/memory.md says what bounds
// it). The model is the benchmark
// BERT layer over batches 1-8 and sequences 1-256, one thread, as a server
// sees requests; its activations run from about 1 KiB to 2 MiB a value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cpu_environment.hpp"
#include "nxrt/session.hpp"

namespace nxrt_test {
namespace {

constexpr int kRuns = 1000;
constexpr int64_t kMaxBatch = 8;
constexpr int64_t kMaxSequence = 256;
constexpr int64_t kHidden = 256;

// The process's resident set in KiB, from /proc/self/status.
size_t ResidentKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoul(line.substr(6));
  }
  return 0;
}

// `kRuns` distinct (batch, sequence) pairs: the largest first, so that the
// first run's memory is the workload's working set and anything above it is
// memory the churn kept, then a fixed random order.
std::vector<std::pair<int64_t, int64_t>> DistinctShapes() {
  std::mt19937 rng(13);
  std::uniform_int_distribution<int64_t> batch(1, kMaxBatch), sequence(1, kMaxSequence);
  std::vector<std::pair<int64_t, int64_t>> shapes{{kMaxBatch, kMaxSequence}};
  std::set<std::pair<int64_t, int64_t>> seen(shapes.begin(), shapes.end());
  while (shapes.size() < kRuns) {
    const std::pair<int64_t, int64_t> shape{batch(rng), sequence(rng)};
    if (seen.insert(shape).second) shapes.push_back(shape);
  }
  return shapes;
}

TEST(ShapeChurnMemory, AThousandNewShapesHoldAtMostAQuarterMoreThanTheFirstRun) {
  nxrt::SessionOptions options;
  options.providers = {{"cpu", {{"threads", "1"}}}};
  auto session = nxrt::Session::Create(
      CpuEnvironment(), std::filesystem::path(NXRT_BINARY_DIR "/models") / "bert_layer.onnx",
      options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();

  // The test's own buffers are at their largest before the first run.
  std::vector<float> values(kMaxBatch * kMaxSequence * kHidden);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  for (float& v : values) v = normal(rng);
  std::vector<nxrt::Tensor> outputs(1);
  const std::vector<int64_t> largest{kMaxBatch, kMaxSequence, kHidden};
  ASSERT_TRUE(outputs[0].Reshape(nxrt::DataType::kFloat32, largest).ok());

  size_t first_kib = 0;
  size_t peak_kib = 0;
  int run = 0;
  for (const auto& [batch, sequence] : DistinctShapes()) {
    const std::vector<int64_t> dims{batch, sequence, kHidden};
    const nxrt::NamedTensor feeds[] = {
        {"hidden_states",
         nxrt::Tensor::Borrow(nxrt::DataType::kFloat32, dims, values.data(),
                              static_cast<size_t>(batch * sequence * kHidden) * sizeof(float))}};
    const nxrt::Status status = (*session)->Run(feeds, {}, outputs);
    ASSERT_TRUE(status.ok()) << "run " << run << " at [" << batch << "," << sequence
                             << ",256]: " << status.ToString();
    ASSERT_EQ(outputs[0].shape(), dims) << "run " << run;
    ASSERT_TRUE(std::isfinite(outputs[0].values<float>()[0])) << "run " << run;
    const size_t resident = ResidentKib();
    if (run++ == 0) first_kib = resident;
    peak_kib = std::max(peak_kib, resident);
  }
  const size_t last_kib = ResidentKib();
  ASSERT_GT(first_kib, 0u) << "no VmRSS in /proc/self/status";
  std::printf("RSS after the first run %zu KiB, after the last %zu KiB (%.2fx), peak %zu KiB\n",
              first_kib, last_kib, static_cast<double>(last_kib) / first_kib, peak_kib);
  EXPECT_LE(static_cast<double>(last_kib), 1.25 * static_cast<double>(first_kib));
}

}  // namespace
}  // namespace nxrt_test
