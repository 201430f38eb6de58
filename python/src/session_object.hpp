// nxrt._nxrt.Session: one nxrt::Session as Python sees it. The Python
// InferenceSession derives from it, so `run` goes from Python straight to
// C++. The GIL is released while the model runs, and any number of Python
// threads may call `run` on one session (nxrt serialises its runs).
#pragma once

#include "casters.hpp"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "nxrt/session.hpp"
#include "run_options_object.hpp"

namespace nxrt::python {

class BindingObject;

// What the Python SessionOptions and providers become.
struct SessionConfig {
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> providers;
  std::vector<std::pair<std::string, int64_t>> free_dimension_overrides;
  bool rewrite_graph = true;
  size_t memory_limit_bytes = 0;
  std::optional<size_t> kernel_cache_variants_per_node;
  std::optional<std::string> capture_mode;
  bool device_graphs = true;
  bool fixed_capacity_kv = false;
  bool kv_in_ep_memory = false;
  std::vector<std::string> plugin_folders;
  std::optional<int> log_severity_level;
  bool profiling = false;
};

class SessionObject {
 public:
  // `model` is a path (str or os.PathLike) or the model's bytes.
  SessionObject(nanobind::handle model, const SessionConfig& config);

  const std::vector<ValueDescription>& inputs() const { return session_->inputs(); }
  const std::vector<ValueDescription>& outputs() const { return session_->outputs(); }
  const std::vector<ValueDescription>& overridable_initializers() const {
    return session_->overridable_initializers();
  }
  const ModelMetadata& metadata() const { return session_->metadata(); }
  const std::vector<std::string>& provider_names() const { return provider_names_; }
  std::vector<NodePlacement> placements() const { return session_->placements(); }
  const graph::DecoderSignature& decoder_signature() const { return session_->decoder_signature(); }
  bool fixed_capacity_kv() const { return fixed_capacity_kv_; }

  // `output_names` None or empty for every output; `feeds` a dict from
  // input name to array (a list for a sequence, None for an absent optional).
  nanobind::list Run(nanobind::handle output_names, nanobind::handle feeds,
                     const RunOptionsObject* run_options);
  void RunWithBinding(BindingObject& binding, const RunOptionsObject* run_options);

  // The events recorded since profiling began or was last taken, as
  // (kind, node, op_type, provider, input_shapes, start_us, duration_us)
  // with start_us counted from the session's creation; clears them.
  std::vector<nanobind::tuple> TakeProfileEvents();
  bool profiling() const { return profiling_; }

  const ValueDescription* FindInput(const std::string& name) const;

 private:
  // The options of one run, checked (with the GIL held: a bad one raises).
  RunOptions ForRun(const RunOptionsObject* run_options);
  // `run()` with the GIL released, and with the profile's lock held when
  // profiling (the run records into it).
  template <typename Run>
  auto Released(Run run) {
    nanobind::gil_scoped_release release;
    if (!profiling_) return run();
    std::lock_guard lock(profile_mutex_);
    return run();
  }
  // Runs with the GIL released, recording into the profile when profiling.
  Status RunTensors(std::span<const NamedTensor> inputs, std::span<const std::string> names,
                    std::vector<Tensor>& outputs, const RunOptionsObject* run_options);

  std::shared_ptr<Environment> environment_;
  std::unique_ptr<Session> session_;
  std::vector<std::string> provider_names_;
  std::unordered_map<std::string, const ValueDescription*> inputs_by_name_;
  std::unordered_map<std::string, const ValueDescription*> outputs_by_name_;
  bool fixed_capacity_kv_ = false;
  bool profiling_ = false;
  std::mutex profile_mutex_;  // held around a profiled run and around taking events
  RunProfile profile_;
  std::chrono::steady_clock::time_point created_;
};

void RegisterSession(nanobind::module_& module);

}  // namespace nxrt::python
