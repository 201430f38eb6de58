// The kernel the CPU EP hands the host when device graphs are on: a thin
// wrapper that forwards everything to the op's kernel and, while this thread
// holds an open capture, records a Compute call instead of running it. Replay
// calls the op's kernel directly, so the wrapper costs nothing there.
#pragma once

#include <memory>
#include <string>

#include "nxrt/ep_sdk.hpp"

namespace nxrt::cpu {

class Recorder;

class RecordingKernel : public sdk::Kernel {
 public:
  RecordingKernel(std::unique_ptr<sdk::Kernel> inner, std::shared_ptr<Recorder> recorder,
                  std::string name);
  ~RecordingKernel() override;

  // "op 'node'", for messages.
  const std::string& name() const { return name_; }
  sdk::Kernel& inner() { return *inner_; }

  // How many live recordings call this kernel; guarded by the recorder.
  int recorded_calls = 0;

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override;
  void SetConstantInputs(std::span<const nxrt_bool> flags) override {
    inner_->SetConstantInputs(flags);
  }
  void PrepareConstantInputs(std::span<const nxrt_constant_input> constants) override {
    inner_->PrepareConstantInputs(constants);
  }
  std::shared_ptr<sdk::SharedState> ShareableConstantState() override {
    return inner_->ShareableConstantState();
  }
  bool AdoptShareableConstantState(const std::shared_ptr<sdk::SharedState>& state) override {
    return inner_->AdoptShareableConstantState(state);
  }
  void SetCaptureSeqIndependent(bool independent) override {
    inner_->SetCaptureSeqIndependent(independent);
  }
  bool CaptureSafe() const override { return inner_->CaptureSafe(); }
  bool TelemetryArm(uint32_t request_id) override { return inner_->TelemetryArm(request_id); }
  void TelemetryReset() override { inner_->TelemetryReset(); }
  std::optional<nxrt_telemetry> TelemetrySnapshot() override { return inner_->TelemetrySnapshot(); }
  void TelemetryDisarm() override { inner_->TelemetryDisarm(); }

 private:
  std::unique_ptr<sdk::Kernel> inner_;
  std::shared_ptr<Recorder> recorder_;
  std::string name_;
};

}  // namespace nxrt::cpu
