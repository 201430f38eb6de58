// What a Session holds: the model, its capture plan, the provider instances,
// the kernel cache, the device graphs and the top executor, plus the mutex
// that lets one run at a time use them.
//
// Member order is destruction order reversed: the executor (whose buffers
// reset captures as they go) dies before the cache, the cache before the
// device graphs it resets on eviction, and all of them before the providers
// and the graph their kernels point into.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device_graph/device_graphs.hpp"
#include "executor/executor.hpp"
#include "kernel_cache/kernel_cache.hpp"
#include "nxrt/environment.hpp"
#include "nxrt/graph/capture_classifier.hpp"
#include "nxrt/graph/capture_explain.hpp"
#include "nxrt/graph/decoder_signature.hpp"
#include "nxrt/graph/ir.hpp"
#include "nxrt/session.hpp"
#include "partitioner/partition.hpp"

namespace nxrt::session {

class SessionState {
 public:
  ~SessionState();

  std::shared_ptr<Environment> environment;
  std::unique_ptr<graph::Graph> graph;
  graph::CapturePlan capture_plan;
  graph::CaptureReport capture_report;
  graph::DecoderSignature decoder_signature;
  std::vector<std::string> graph_rewrites;  // one line per change
  std::vector<partitioner::RankedProvider> providers;
  std::unique_ptr<device_graph::DeviceGraphs> device_graphs;
  std::unique_ptr<kernel_cache::KernelCache> cache;
  executor::MemoryBudget memory_budget;  // outlives the buffers it counts
  executor::ExecutorShared shared;
  std::unique_ptr<executor::Executor> executor;
  std::vector<ValueDescription> inputs;
  std::vector<ValueDescription> outputs;
  std::vector<ValueDescription> overridable_initializers;

  std::mutex run_mutex;                        // one run (or telemetry call) at a time
  std::vector<executor::RunInput> run_inputs;  // reused by every run
};

}  // namespace nxrt::session
