// Per-node dispatch overhead of the executor in steady state: a chain of
// 1,000 one-element Adds on the mock EP, run eagerly (pre-bound kernel
// lookup, reused buffers) and replayed from a device graph. The ns_per_node
// counter is the whole run's time divided by the node count; the mock's own
// compute (a logged call and a scalar add) is included.
#include <dlfcn.h>

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

// The mock logs every call; the benchmark empties its log between batches.
void ClearMockLog(const char* log_id) {
  static void* library = dlopen(NXRT_BINARY_DIR "/lib/libep_mock.so", RTLD_NOW);
  static auto clear =
      library ? reinterpret_cast<void (*)(const char*)>(dlsym(library, "nxrt_mock_clear_call_log"))
              : nullptr;
  if (clear) clear(log_id);
}

void RunChain(benchmark::State& state, bool replay) {
  nxrt::EnvironmentOptions env_options;
  env_options.plugin_folders = {NXRT_BINARY_DIR "/lib"};
  auto env = nxrt::Environment::Create(env_options);
  const char* log_id = replay ? "bench.replay" : "bench.eager";
  nxrt::SessionOptions options;
  options.providers.push_back({"mock", {{"log", log_id}}});
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
  int64_t batch = 0;
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
    if (++batch == 64) {
      state.PauseTiming();
      ClearMockLog(log_id);
      batch = 0;
      state.ResumeTiming();
    }
  }
  if (outputs.empty() || outputs[0].values<float>()[0] != x + kNodes) {
    state.SkipWithError("the chain computed a wrong sum");
  }
  if (state.iterations() > 0) {
    state.counters["ns_per_node"] = run_ns / static_cast<double>(state.iterations()) / kNodes;
  }
  const auto counters = (*session)->device_graph_counters();
  state.counters["replays"] = static_cast<double>(counters.replays);
}

void BM_DispatchEager(benchmark::State& state) {
  RunChain(state, false);
}
void BM_DispatchReplay(benchmark::State& state) {
  RunChain(state, true);
}

BENCHMARK(BM_DispatchEager)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DispatchReplay)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
