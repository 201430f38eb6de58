// Session: one loaded model, partitioned over execution providers, ready to
// run.
//
// Create loads the model, infers shapes, classifies which nodes may be
// captured into device graphs, and asks the providers (in priority order) to
// claim every node; a node nobody claims fails creation with every provider's
// reason. Run binds named inputs, checks them against the model before any
// kernel runs, and returns the wanted outputs. Inputs are only read, except
// the past KV tensors of a session with SessionOptions::fixed_capacity_kv,
// which a run updates in place when bound at the present outputs' dims and
// dtype (see there).
//
// Concurrency: Run may be called from any number of threads; runs of one
// session are serialised (one at a time), because a session keeps one set of
// value buffers, kernels and device graphs that every run reuses. That reuse
// is what makes a steady-state run allocation-free; run several sessions for
// parallel throughput.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "nxrt/environment.hpp"
#include "nxrt/graph/capture_explain.hpp"
#include "nxrt/graph/decoder_signature.hpp"
#include "nxrt/graph/ir.hpp"
#include "nxrt/run_options.hpp"
#include "nxrt/session_options.hpp"
#include "nxrt/session_report.hpp"
#include "nxrt/support/export.hpp"
#include "nxrt/support/status.hpp"
#include "nxrt/tensor.hpp"
#include "nxrt/value.hpp"

namespace nxrt {

namespace session {
class SessionState;
}  // namespace session

// A device-graph slot: Primary for single-token decode steps, Verify for
// K-token speculative verification. A run on a slot replays that slot's
// captured segments; a run without one is eager.
enum class DeviceGraphSlot { kPrimary, kVerify };

// A model input or output as declared: dims are numbers, or symbol names
// for dynamic extents.
struct ValueDescription {
  std::string name;
  graph::ValueKind kind = graph::ValueKind::kTensor;  // a tensor, sequence or optional
  DataType dtype = DataType::kUndefined;              // of the tensor, or of each element
  bool rank_known = false;
  std::vector<std::string> shape;  // "2", "batch"...
};

// The producer, version, descriptions and metadata_props of the model file.
using ModelMetadata = graph::ModelMetadata;

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

struct NamedValue {
  std::string name;
  Value value;
};

class NXRT_API Session {
 public:
  static Result<std::unique_ptr<Session>> Create(std::shared_ptr<Environment> environment,
                                                 const std::filesystem::path& model_file,
                                                 SessionOptions options = {});
  // `display_name` names the model in errors; external data is looked up in
  // `external_data_dir`.
  static Result<std::unique_ptr<Session>> Create(std::shared_ptr<Environment> environment,
                                                 std::span<const std::byte> model_bytes,
                                                 const std::string& display_name,
                                                 const std::filesystem::path& external_data_dir,
                                                 SessionOptions options = {});
  // A model already in the IR (built in code rather than loaded).
  static Result<std::unique_ptr<Session>> Create(std::shared_ptr<Environment> environment,
                                                 graph::Graph model, SessionOptions options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::vector<ValueDescription>& inputs() const;
  const std::vector<ValueDescription>& outputs() const;
  // Initializers the model also lists among its graph inputs: a run may feed
  // a replacement by name (of the declared type), and takes the model's
  // data when it does not. They are not constants, so kernels cannot
  // prepare them ahead of the run.
  const std::vector<ValueDescription>& overridable_initializers() const;
  // What the model file says about itself; empty for a graph built in code.
  const ModelMetadata& metadata() const;

  // Runs eagerly and returns the outputs named in `output_names` (all
  // outputs when empty), as owning host tensors. Every Run and RunValues
  // takes RunOptions last, to stop a run early (see run_options.hpp).
  Result<std::vector<Tensor>> Run(std::span<const NamedTensor> inputs,
                                  std::span<const std::string> output_names = {},
                                  const RunOptions& run_options = {});
  // As above, writing into `outputs` (resized to the wanted count). A tensor
  // that already owns storage of the right byte size is reused, so repeated
  // runs at fixed shapes allocate nothing.
  Status Run(std::span<const NamedTensor> inputs, std::span<const std::string> output_names,
             std::vector<Tensor>& outputs, const RunOptions& run_options = {});
  // A run on a device-graph slot: capture-eligible segments are captured once
  // warm and replayed after.
  Status Run(DeviceGraphSlot slot, std::span<const NamedTensor> inputs,
             std::span<const std::string> output_names, std::vector<Tensor>& outputs,
             const RunOptions& run_options = {});
  // Inputs and outputs that may be sequences or absent optionals.
  Result<std::vector<Value>> RunValues(std::span<const NamedValue> inputs,
                                       std::span<const std::string> output_names = {},
                                       const RunOptions& run_options = {});

  // The rewrites applied before placement, one line each, naming the nodes
  // changed (SessionOptions::rewrite_graph).
  const std::vector<std::string>& graph_rewrites() const;
  // Placement of every node, with the declines that came before it.
  const std::vector<NodePlacement>& placements() const;
  KernelCacheStats kernel_cache_stats() const;
  // The capture classifier's verdicts, with why each ineligible node is eager.
  const graph::CaptureReport& capture_report() const;
  // How a token loop feeds this model as a decoder, read from its graph:
  // the roles of its inputs, each KV past with its present and growing axis,
  // and the logits; problems() says why a model is no decoder it can drive.
  const graph::DecoderSignature& decoder_signature() const;
  // Both slots' device-graph counts together, and one slot's.
  DeviceGraphCounters device_graph_counters() const;
  DeviceGraphCounters device_graph_counters(DeviceGraphSlot slot) const;
  // Bytes the buffers of the graph's values hold now (weights and the
  // caller's tensors excluded). Values whose lifetimes never overlap share a
  // buffer, so this stays near the largest set of values alive at once.
  size_t value_buffer_bytes() const;

  // Per-request kernel telemetry: arm every kernel (now and created later)
  // under `request_id`, read the sums, zero them, disarm. Arm answers how
  // many kernels had something to report.
  Result<size_t> ArmTelemetry(uint32_t request_id);
  Result<TelemetryTotals> TelemetrySnapshot();
  Status ResetTelemetry();
  Status DisarmTelemetry();

 private:
  explicit Session(std::unique_ptr<session::SessionState> state);
  // Runs the bound inputs with the run mutex held; `slot` is an nxrt_graph_slot.
  Status RunLocked(std::optional<int> slot, std::span<const std::string> output_names,
                   std::vector<Tensor>& outputs, const RunOptions& run_options);
  std::unique_ptr<session::SessionState> state_;
};

}  // namespace nxrt
