// Device-graph replay on the CPU EP against its eager path: a chain of 1,000
// one-element Adds run eagerly (pre-bound kernels, reused buffers) and on
// the Primary slot, where after one warm-up run the segment is captured and
// every later run replays the recorded kernel calls. ns_per_node is the whole
// run's time, host checks and kernels included, divided by the node count.
// scripts/bench-vs-ort sets the same model against ONNX Runtime.
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "add_chain_graph.hpp"
#include "nxrt/environment.hpp"
#include "nxrt/graph/ir.hpp"
#include "nxrt/session.hpp"

namespace {

constexpr int kNodes = 1000;

void RunChain(benchmark::State& state, bool replay) {
  nxrt::EnvironmentOptions env_options;
  env_options.plugin_folders = {NXRT_BINARY_DIR "/lib"};
  auto env = nxrt::Environment::Create(env_options);
  nxrt::SessionOptions options;
  options.providers.push_back({"cpu", {{"threads", "1"}}});
  auto session = env.ok() ? nxrt::Session::Create(*env, nxrt_bench::AddChain(kNodes), options)
                          : nxrt::Result<std::unique_ptr<nxrt::Session>>(env.status());
  if (!session.ok()) {
    state.SkipWithError(session.status().ToString().c_str());
    return;
  }
  float x = 0.0f;
  std::vector<nxrt::NamedTensor> inputs{
      {"x", nxrt::Tensor::Borrow(nxrt::DataType::kFloat32, {1}, &x, sizeof(float))}};
  std::vector<nxrt::Tensor> outputs;
  auto run = [&]() {
    return replay ? (*session)->Run(nxrt::DeviceGraphSlot::kPrimary, inputs, {}, outputs)
                  : (*session)->Run(inputs, {}, outputs);
  };
  for (int warm = 0; warm < 3; ++warm) {
    if (nxrt::Status s = run(); !s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      return;
    }
  }
  double run_ns = 0;
  for (auto _ : state) {
    x += 1.0f;
    const auto start = std::chrono::steady_clock::now();
    nxrt::Status status = run();
    run_ns +=
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    if (!status.ok()) {
      state.SkipWithError(status.ToString().c_str());
      break;
    }
  }
  if (outputs.empty() || outputs[0].values<float>()[0] != x + kNodes) {
    state.SkipWithError("the chain computed a wrong sum");
  }
  if (state.iterations() > 0) {
    state.counters["ns_per_node"] = run_ns / static_cast<double>(state.iterations()) / kNodes;
  }
  const auto counters = (*session)->device_graph_counters();
  state.counters["captures"] = static_cast<double>(counters.captures);
  state.counters["replays"] = static_cast<double>(counters.replays);
}

void BM_CpuChainEager(benchmark::State& state) {
  RunChain(state, false);
}
void BM_CpuChainReplay(benchmark::State& state) {
  RunChain(state, true);
}

BENCHMARK(BM_CpuChainEager)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CpuChainReplay)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
