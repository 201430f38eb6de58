// The cpu EP used from several threads at once, as a server uses it: threads
// that each create and run their own session of a model (eagerly, or on the
// Primary device-graph slot, so that every session records and replays its
// own captures), and threads that share one session, must get exactly the
// outputs of the same eager runs made one after another. The plugin is loaded once and serves every
// session, so this checks that it keeps no unguarded state across sessions and kernels: the
// prepared weights, oneDNN's primitives, the math libraries' settings. The
// tsan preset runs it under ThreadSanitizer. Models: the benchmark CNN, MLP
// (one row on gemv, several on oneDNN) and BERT layer (the models target).
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cpu_environment.hpp"
#include "nxrt/session.hpp"

namespace nxrt_test {
namespace {

constexpr int kThreads = 4;
constexpr int kRoundsPerThread = 2;

struct ModelInput {
  std::vector<int64_t> dims;
  std::vector<float> values;
};

struct ModelCase {
  std::string file;  // under the build's models folder
  std::string input;
  std::vector<std::vector<int64_t>> shapes;  // one input per shape
};

void PrintTo(const ModelCase& model, std::ostream* out) {
  *out << model.file;
}

std::vector<ModelCase> Cases() {
  return {{"cnn.onnx", "image", {{1, 3, 64, 64}, {1, 3, 64, 64}}},
          {"mlp.onnx", "x", {{1, 1024}, {3, 1024}, {1, 1024}}},
          {"bert_layer.onnx", "hidden_states", {{1, 16, 256}, {2, 8, 256}}}};
}

std::vector<ModelInput> Inputs(const ModelCase& model) {
  std::mt19937 rng(17);
  std::normal_distribution<float> normal;
  std::vector<ModelInput> inputs;
  for (const auto& dims : model.shapes) {
    ModelInput input{dims, {}};
    size_t count = 1;
    for (int64_t d : dims) count *= static_cast<size_t>(d);
    input.values.resize(count);
    for (float& v : input.values) v = normal(rng);
    inputs.push_back(std::move(input));
  }
  return inputs;
}

nxrt::Result<std::unique_ptr<nxrt::Session>> OpenSession(const ModelCase& model) {
  nxrt::SessionOptions options;
  options.providers = {{"cpu", {{"threads", "1"}}}};
  return nxrt::Session::Create(
      CpuEnvironment(), std::filesystem::path(NXRT_BINARY_DIR "/models") / model.file, options);
}

// An eager run, or one on `slot`.
nxrt::Result<std::vector<float>> RunOnce(nxrt::Session& session, const ModelCase& model,
                                         ModelInput& input,
                                         std::optional<nxrt::DeviceGraphSlot> slot = std::nullopt) {
  const nxrt::NamedTensor feeds[] = {
      {model.input, nxrt::Tensor::Borrow(nxrt::DataType::kFloat32, input.dims, input.values.data(),
                                         input.values.size() * sizeof(float))}};
  std::vector<nxrt::Tensor> outputs;
  NXRT_RETURN_IF_ERROR(slot ? session.Run(*slot, feeds, {}, outputs)
                            : session.Run(feeds, {}, outputs));
  const auto values = outputs.at(0).values<float>();
  return std::vector<float>(values.begin(), values.end());
}

// Every input run once, in order, on one session.
std::vector<std::vector<float>> Sequential(const ModelCase& model,
                                           std::vector<ModelInput>& inputs) {
  auto session = OpenSession(model);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  std::vector<std::vector<float>> outputs;
  if (!session.ok()) return outputs;
  for (ModelInput& input : inputs) {
    auto output = RunOnce(**session, model, input);
    EXPECT_TRUE(output.ok()) << output.status().ToString();
    outputs.push_back(output.ok() ? std::move(output).value() : std::vector<float>{});
  }
  return outputs;
}

// Runs `body(thread)` on kThreads threads at once and returns the problems
// they reported, one line each.
template <typename Body>
std::vector<std::string> OnThreads(const Body& body) {
  std::mutex mutex;
  std::vector<std::string> problems;
  const auto report = [&](const std::string& problem) {
    std::lock_guard lock(mutex);
    problems.push_back(problem);
  };
  std::vector<std::thread> threads;
  for (int thread = 0; thread < kThreads; ++thread) {
    threads.emplace_back([&, thread] { body(thread, report); });
  }
  for (std::thread& thread : threads) thread.join();
  return problems;
}

// Each thread walks the inputs from its own starting point, so different
// shapes (and kernels) run at once; on a slot, each input runs three times in
// a row, so that its capture is replayed before the next shape resets it.
template <typename SessionFor>
void RunAllInputs(int thread, const ModelCase& model, std::vector<ModelInput> inputs,
                  const std::vector<std::vector<float>>& expected, const SessionFor& session_for,
                  const std::function<void(const std::string&)>& report,
                  std::optional<nxrt::DeviceGraphSlot> slot = std::nullopt) {
  const size_t repeats = slot ? 3 : 1;
  for (int round = 0; round < kRoundsPerThread; ++round) {
    for (size_t k = 0; k < inputs.size() * repeats; ++k) {
      const size_t i = (k / repeats + static_cast<size_t>(thread)) % inputs.size();
      auto output = RunOnce(session_for(), model, inputs[i], slot);
      if (!output.ok()) {
        report(model.file + ": " + output.status().ToString());
      } else if (*output != expected[i]) {
        report(model.file + ": thread " + std::to_string(thread) + ", input " + std::to_string(i) +
               " differs from the sequential run");
      }
    }
  }
}

class CpuEpConcurrency : public ::testing::TestWithParam<ModelCase> {
 protected:
  void SetUp() override {
    const auto file = std::filesystem::path(NXRT_BINARY_DIR "/models") / GetParam().file;
    if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " is not built (models target)";
    inputs_ = Inputs(GetParam());
    expected_ = Sequential(GetParam(), inputs_);
    ASSERT_EQ(expected_.size(), inputs_.size());
  }

  std::vector<ModelInput> inputs_;
  std::vector<std::vector<float>> expected_;
};

TEST_P(CpuEpConcurrency, SessionsOfTheirOwnOnEveryThreadGiveTheSequentialOutputs) {
  const ModelCase& model = GetParam();
  const auto problems = OnThreads([&](int thread, const auto& report) {
    auto session = OpenSession(model);
    if (!session.ok()) return report(model.file + ": " + session.status().ToString());
    RunAllInputs(
        thread, model, inputs_, expected_, [&]() -> nxrt::Session& { return **session; }, report);
  });
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems, the first: " << problems[0];
}

TEST_P(CpuEpConcurrency, SessionsOfTheirOwnReplayingOnTheDecodeSlotGiveTheSequentialOutputs) {
  const ModelCase& model = GetParam();
  std::mutex mutex;
  uint64_t replays = 0;
  const auto problems = OnThreads([&](int thread, const auto& report) {
    auto session = OpenSession(model);
    if (!session.ok()) return report(model.file + ": " + session.status().ToString());
    RunAllInputs(
        thread, model, inputs_, expected_, [&]() -> nxrt::Session& { return **session; }, report,
        nxrt::DeviceGraphSlot::kPrimary);
    std::lock_guard lock(mutex);
    replays += (*session)->device_graph_counters().replays;
  });
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems, the first: " << problems[0];
  EXPECT_GT(replays, 0u) << "no session replayed a capture";
}

TEST_P(CpuEpConcurrency, OneSessionSharedByEveryThreadGivesTheSequentialOutputs) {
  const ModelCase& model = GetParam();
  auto session = OpenSession(model);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const auto problems = OnThreads([&](int thread, const auto& report) {
    RunAllInputs(
        thread, model, inputs_, expected_, [&]() -> nxrt::Session& { return **session; }, report);
  });
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems, the first: " << problems[0];
}

INSTANTIATE_TEST_SUITE_P(BenchmarkModels, CpuEpConcurrency, ::testing::ValuesIn(Cases()),
                         [](const auto& info) {
                           const std::string& file = info.param.file;
                           return file.substr(0, file.find('.'));
                         });

}  // namespace
}  // namespace nxrt_test
