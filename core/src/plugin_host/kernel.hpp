// One kernel made by a plugin: a node's compiled artifact at concrete shapes.
//
// Owns nxrt_kernel* (destroyed with the Kernel) and holds its provider, so the
// EP instance, the node view and the library outlive it. Optional entries fall
// back to the ABI defaults: constant flags ignored, nothing to prepare,
// nothing shared, not capture-safe, no telemetry. The caller never runs two
// calls on one kernel at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "nxrt/ep_abi.h"
#include "nxrt/support/status.hpp"
#include "plugin_host/compute_context.hpp"
#include "plugin_host/node_view.hpp"
#include "plugin_host/shared_constant_state.hpp"

namespace nxrt::plugin_host {

class ExecutionProvider;

class Kernel {
 public:
  Kernel(std::shared_ptr<ExecutionProvider> provider, std::shared_ptr<const NodeView> node,
         nxrt_kernel* handle);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  const ExecutionProvider& provider() const { return *provider_; }
  const std::shared_ptr<ExecutionProvider>& provider_ptr() const { return provider_; }
  const NodeView& node() const { return *node_; }
  nxrt_kernel* handle() const { return handle_; }

  // `inputs` one per node input, `outputs` one per node output.
  Status Compute(ComputeServices& services, std::span<const nxrt_value> inputs,
                 std::span<nxrt_value> outputs);
  // What Compute calls, for a dispatcher that keeps it beside its own
  // per-node state and so reads one memory line fewer per call than going
  // through this object; it finishes each call's status with ComputeStatus.
  struct ComputeEntry {
    decltype(nxrt_kernel_api::compute) compute = nullptr;
    nxrt_kernel* handle = nullptr;
  };
  ComputeEntry compute_entry() const { return {api_->compute, handle_}; }
  // Ok for null, else the plugin's status taken over and naming this kernel.
  Status ComputeStatus(nxrt_status* failed) const;

  void SetConstantInputs(std::span<const bool> flags);
  void SetConstantInputs(const std::vector<bool>& flags);
  Status PrepareConstantInputs(std::span<const nxrt_constant_input> constants);
  // Keeps `owner`, which holds the bytes of constants handed over with
  // bytes_persist, alive until the plugin's kernel is destroyed: the kernel,
  // or a state it adopts, may read them in place.
  void RetainConstantBytes(std::shared_ptr<const void> owner) {
    constant_bytes_owner_ = std::move(owner);
  }
  // Empty when the kernel has nothing to share.
  SharedConstantState ShareableConstantState();
  // True when the kernel adopted `state` and needs no preparation.
  Result<bool> AdoptShareableConstantState(const SharedConstantState& state);

  void SetCaptureSeqIndependent(bool independent);
  bool capture_safe() const;
  // The plugin's serves_other_shapes: true when this kernel computes at any
  // input shapes of the ranks it was made at.
  bool serves_other_shapes() const;

  // True when armed (false: nothing to report).
  Result<bool> TelemetryArm(uint32_t request_id);
  Status TelemetryReset();
  // nullopt when nothing was observed.
  Result<std::optional<nxrt_telemetry>> TelemetrySnapshot();
  Status TelemetryDisarm();

  // The node and EP, for error messages: "model.onnx: node 'n' (Add) on EP 'cpu'".
  std::string Describe() const;

 private:
  std::shared_ptr<ExecutionProvider> provider_;
  std::shared_ptr<const NodeView> node_;
  const nxrt_kernel_api* api_;  // the plugin's normalised table
  nxrt_kernel* handle_;
  std::shared_ptr<const void> constant_bytes_owner_;  // released after handle_ is destroyed
};

}  // namespace nxrt::plugin_host
