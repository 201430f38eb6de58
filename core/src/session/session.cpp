#include "nxrt/session.hpp"

#include <atomic>

#include "nxrt/graph/free_dimensions.hpp"
#include "nxrt/graph/graph_rewrites.hpp"
#include "nxrt/graph/loader.hpp"
#include "nxrt/graph/shape_inference.hpp"
#include "nxrt/support/log.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "session/constant_folding.hpp"
#include "session/session_state.hpp"

namespace nxrt {
namespace session {

SessionState::~SessionState() {
  // Captures may point at buffers and kernels about to go.
  if (device_graphs) {
    Status reset = device_graphs->ResetAllSlots();
    if (!reset.ok()) GetLogger()->warn("closing a session: {}", reset.message());
  }
  executor.reset();
  cache.reset();
}

}  // namespace session

namespace {

uint64_t NextExecutorId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

ValueDescription Describe(const graph::Graph& graph, graph::ValueId id) {
  const graph::Value& value = graph.value(id);
  ValueDescription d;
  d.name = value.name;
  d.kind = value.kind;
  d.dtype = value.dtype;
  d.rank_known = value.shape.has_value();
  if (value.shape) {
    for (const graph::Dim& dim : *value.shape) {
      d.shape.push_back(dim.is_static() ? std::to_string(dim.extent())
                                        : graph.symbol(dim.symbol()).name);
    }
  }
  return d;
}

Result<std::unique_ptr<session::SessionState>> Build(std::shared_ptr<Environment> environment,
                                                     Result<graph::Graph> loaded,
                                                     const SessionOptions& options) {
  if (!environment) return InvalidArgument("a session needs an Environment");
  if (!loaded.ok()) return loaded.status();
  auto state = std::make_unique<session::SessionState>();
  state->environment = std::move(environment);
  state->graph = std::make_unique<graph::Graph>(std::move(loaded).value());
  graph::Graph& graph = *state->graph;
  NXRT_RETURN_IF_ERROR(graph::OverrideFreeDimensions(graph, options.free_dimension_overrides));
  if (options.rewrite_graph) {
    state->graph_rewrites = graph::ConstantNodesToInitializers(graph);
    for (std::string& line : session::FoldConstants(graph, state->environment, options)) {
      state->graph_rewrites.push_back(std::move(line));
    }
    for (std::string& line : graph::FoldBatchNormalizationIntoConv(graph)) {
      state->graph_rewrites.push_back(std::move(line));
    }
  }
  NXRT_RETURN_IF_ERROR(graph::InferShapes(graph));

  graph::CaptureOptions capture_options;
  capture_options.mode = options.capture_mode;
  capture_options.fixed_capacity_kv = options.fixed_capacity_kv;
  state->decoder_signature = graph::DescribeDecoder(graph);
  capture_options.decoder = &state->decoder_signature;
  state->capture_plan = graph::ClassifyCapture(graph, capture_options);
  state->capture_report = graph::ExplainCapture(graph, state->capture_plan);

  std::vector<ExecutionProviderSpec> specs = options.providers;
  if (specs.empty()) specs.push_back({"cpu", {}});
  std::string unavailable;  // why each EP without its device was left out
  for (size_t i = 0; i < specs.size(); ++i) {
    NXRT_ASSIGN_OR_RETURN(std::shared_ptr<plugin_host::Plugin> plugin,
                          state->environment->registry().Load(specs[i].name_or_path));
    auto provider = plugin_host::ExecutionProvider::Create(plugin, specs[i].options);
    if (!provider.ok() && provider.status().code() == StatusCode::kUnavailable) {
      // A missing device is a decline of the whole EP: the next ones take over.
      GetLogger()->warn("{}; using the next EP", provider.status().message());
      unavailable += (unavailable.empty() ? "" : "; ") + provider.status().message();
      continue;
    }
    if (!provider.ok()) return provider.status();
    state->providers.push_back({*provider, (*provider)->name() + "#" + std::to_string(i + 1)});
  }
  if (state->providers.empty()) {
    return Unavailable("no execution provider is available (" + unavailable +
                       "); add an EP that runs on this machine, e.g. --ep cpu");
  }

  state->device_graphs = std::make_unique<device_graph::DeviceGraphs>(state->providers);
  kernel_cache::KernelCacheOptions cache_options;
  cache_options.variants_per_node =
      options.kernel_cache_variants_per_node.value_or(kernel_cache::KernelCacheVariantsPerNode());
  state->cache = std::make_unique<kernel_cache::KernelCache>(*state->device_graphs, cache_options);

  state->shared.providers = state->providers;
  state->shared.cache = state->cache.get();
  state->shared.device_graphs = options.device_graphs ? state->device_graphs.get() : nullptr;
  state->shared.executor_id = NextExecutorId();
  state->shared.fixed_capacity_kv = options.fixed_capacity_kv;
  state->shared.kv_in_ep_memory = options.kv_in_ep_memory;
  state->shared.fuse_nodes = options.rewrite_graph;
  state->memory_budget.set_limit(options.memory_limit_bytes);
  state->shared.memory_budget = &state->memory_budget;
  NXRT_ASSIGN_OR_RETURN(state->executor, executor::Executor::Build(graph, state->shared,
                                                                   &state->capture_plan, nullptr));
  const std::vector<std::string>& fusions = state->executor->fusions();
  state->graph_rewrites.insert(state->graph_rewrites.end(), fusions.begin(), fusions.end());
  for (graph::ValueId id : graph.inputs) state->inputs.push_back(Describe(graph, id));
  for (graph::ValueId id : graph.outputs) state->outputs.push_back(Describe(graph, id));
  for (uint32_t i = 0; i < graph.values.size(); ++i) {
    if (graph.values[i].is_overridable()) {
      state->overridable_initializers.push_back(Describe(graph, graph::ValueId{i}));
    }
  }
  if (!state->overridable_initializers.empty()) {
    GetLogger()->info(
        "{}: {} initializers are also graph inputs, so a run may replace them and kernels "
        "cannot prepare them as constants (first: '{}'); if no run replaces them, remove them "
        "from the graph inputs",
        graph.model_path, state->overridable_initializers.size(),
        state->overridable_initializers.front().name);
  }
  return state;
}

}  // namespace

const char* EagerFallbackReasonName(EagerFallbackReason reason) {
  switch (reason) {
    case EagerFallbackReason::kWarmingUp:
      return "warming-up";
    case EagerFallbackReason::kShapeChanged:
      return "shape-changed";
    case EagerFallbackReason::kAddressChanged:
      return "address-changed";
    case EagerFallbackReason::kEpochChanged:
      return "epoch-changed";
    case EagerFallbackReason::kNotCaptureSafe:
      return "not-capture-safe";
    case EagerFallbackReason::kCount:
      break;
  }
  return "unknown";
}

Session::Session(std::unique_ptr<session::SessionState> state) : state_(std::move(state)) {}
Session::~Session() = default;

Result<std::unique_ptr<Session>> Session::Create(std::shared_ptr<Environment> environment,
                                                 const std::filesystem::path& model_file,
                                                 SessionOptions options) {
  NXRT_ASSIGN_OR_RETURN(
      std::unique_ptr<session::SessionState> state,
      Build(std::move(environment), graph::LoadModelFromFile(model_file), options));
  return std::unique_ptr<Session>(new Session(std::move(state)));
}

Result<std::unique_ptr<Session>> Session::Create(std::shared_ptr<Environment> environment,
                                                 std::span<const std::byte> model_bytes,
                                                 const std::string& display_name,
                                                 const std::filesystem::path& external_data_dir,
                                                 SessionOptions options) {
  NXRT_ASSIGN_OR_RETURN(
      std::unique_ptr<session::SessionState> state,
      Build(std::move(environment),
            graph::LoadModelFromBytes(model_bytes, display_name, external_data_dir), options));
  return std::unique_ptr<Session>(new Session(std::move(state)));
}

Result<std::unique_ptr<Session>> Session::Create(std::shared_ptr<Environment> environment,
                                                 graph::Graph model, SessionOptions options) {
  NXRT_ASSIGN_OR_RETURN(std::unique_ptr<session::SessionState> state,
                        Build(std::move(environment), std::move(model), options));
  return std::unique_ptr<Session>(new Session(std::move(state)));
}

const std::vector<ValueDescription>& Session::inputs() const {
  return state_->inputs;
}
const std::vector<ValueDescription>& Session::outputs() const {
  return state_->outputs;
}
const std::vector<ValueDescription>& Session::overridable_initializers() const {
  return state_->overridable_initializers;
}
const ModelMetadata& Session::metadata() const {
  return state_->graph->metadata;
}

Result<std::vector<Tensor>> Session::Run(std::span<const NamedTensor> inputs,
                                         std::span<const std::string> output_names,
                                         const RunOptions& run_options) {
  std::vector<Tensor> outputs;
  NXRT_RETURN_IF_ERROR(Run(inputs, output_names, outputs, run_options));
  return outputs;
}

Status Session::Run(std::span<const NamedTensor> inputs, std::span<const std::string> output_names,
                    std::vector<Tensor>& outputs, const RunOptions& run_options) {
  std::lock_guard lock(state_->run_mutex);
  std::vector<executor::RunInput>& run_inputs = state_->run_inputs;
  run_inputs.clear();
  for (const NamedTensor& input : inputs)
    run_inputs.push_back({input.name, &input.tensor, nullptr});
  return RunLocked(std::nullopt, output_names, outputs, run_options);
}

Status Session::Run(DeviceGraphSlot slot, std::span<const NamedTensor> inputs,
                    std::span<const std::string> output_names, std::vector<Tensor>& outputs,
                    const RunOptions& run_options) {
  std::lock_guard lock(state_->run_mutex);
  std::vector<executor::RunInput>& run_inputs = state_->run_inputs;
  run_inputs.clear();
  for (const NamedTensor& input : inputs)
    run_inputs.push_back({input.name, &input.tensor, nullptr});
  return RunLocked(
      slot == DeviceGraphSlot::kVerify ? NXRT_GRAPH_SLOT_VERIFY : NXRT_GRAPH_SLOT_PRIMARY,
      output_names, outputs, run_options);
}

Status Session::RunLocked(std::optional<int> slot, std::span<const std::string> output_names,
                          std::vector<Tensor>& outputs, const RunOptions& run_options) {
  executor::Executor& executor = *state_->executor;
  std::optional<nxrt_graph_slot> graph_slot;
  if (slot) graph_slot = static_cast<nxrt_graph_slot>(*slot);
  NXRT_RETURN_IF_ERROR(executor.Run(state_->run_inputs, graph_slot, run_options));
  const size_t wanted = output_names.empty() ? state_->outputs.size() : output_names.size();
  outputs.resize(wanted);
  for (size_t i = 0; i < wanted; ++i) {
    const std::string& name = output_names.empty() ? state_->outputs[i].name : output_names[i];
    NXRT_ASSIGN_OR_RETURN(const size_t value_slot, executor.OutputSlot(name));
    NXRT_RETURN_IF_ERROR(executor.ExportTensor(value_slot, outputs[i]));
  }
  return Status::Ok();
}

Result<std::vector<Value>> Session::RunValues(std::span<const NamedValue> inputs,
                                              std::span<const std::string> output_names,
                                              const RunOptions& run_options) {
  std::lock_guard lock(state_->run_mutex);
  std::vector<executor::RunInput>& run_inputs = state_->run_inputs;
  run_inputs.clear();
  for (const NamedValue& input : inputs) {
    run_inputs.push_back({input.name, nullptr, &input.value});
  }
  executor::Executor& executor = *state_->executor;
  NXRT_RETURN_IF_ERROR(executor.Run(run_inputs, std::nullopt, run_options));
  const size_t wanted = output_names.empty() ? state_->outputs.size() : output_names.size();
  std::vector<Value> outputs;
  outputs.reserve(wanted);
  for (size_t i = 0; i < wanted; ++i) {
    const std::string& name = output_names.empty() ? state_->outputs[i].name : output_names[i];
    NXRT_ASSIGN_OR_RETURN(const size_t value_slot, executor.OutputSlot(name));
    NXRT_ASSIGN_OR_RETURN(Value value, executor.ExportValue(value_slot));
    outputs.push_back(std::move(value));
  }
  return outputs;
}

const std::vector<NodePlacement>& Session::placements() const {
  return state_->executor->placements();
}

KernelCacheStats Session::kernel_cache_stats() const {
  const kernel_cache::CacheStats s = state_->cache->stats();
  return {s.entries, s.hits, s.misses, s.prebind_hits, s.evictions, s.shape_general_entries};
}

const std::vector<std::string>& Session::graph_rewrites() const {
  return state_->graph_rewrites;
}

const graph::CaptureReport& Session::capture_report() const {
  return state_->capture_report;
}

const graph::DecoderSignature& Session::decoder_signature() const {
  return state_->decoder_signature;
}

DeviceGraphCounters Session::device_graph_counters() const {
  return state_->device_graphs->counters();
}

DeviceGraphCounters Session::device_graph_counters(DeviceGraphSlot slot) const {
  return state_->device_graphs->counters(static_cast<nxrt_graph_slot>(slot));
}

size_t Session::value_buffer_bytes() const {
  std::lock_guard lock(state_->run_mutex);
  return state_->executor->value_buffer_bytes();
}

Result<size_t> Session::ArmTelemetry(uint32_t request_id) {
  std::lock_guard lock(state_->run_mutex);
  return state_->cache->ArmTelemetry(request_id);
}

Result<TelemetryTotals> Session::TelemetrySnapshot() {
  std::lock_guard lock(state_->run_mutex);
  NXRT_ASSIGN_OR_RETURN(const kernel_cache::TelemetryTotals t, state_->cache->SnapshotTelemetry());
  TelemetryTotals totals;
  totals.uploaded_bytes = t.uploaded_bytes;
  totals.committed_bytes = t.committed_bytes;
  totals.logical_bytes = t.logical_bytes;
  totals.unique_bytes = t.unique_bytes;
  totals.page_ins = t.page_ins;
  totals.physical_bytes = t.physical_bytes;
  totals.byte_hit_rate = t.byte_hit_rate;
  return totals;
}

Status Session::ResetTelemetry() {
  std::lock_guard lock(state_->run_mutex);
  return state_->cache->ResetTelemetry();
}

Status Session::DisarmTelemetry() {
  std::lock_guard lock(state_->run_mutex);
  return state_->cache->DisarmTelemetry();
}

}  // namespace nxrt
