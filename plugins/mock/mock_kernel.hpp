// A mock kernel: logs every call, honours the injected faults, computes the
// ops of mock_ops.hpp for real, records itself while its EP captures, and
// shares prepared constants when told to.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "mock_ep_state.hpp"
#include "nxrt/ep_sdk.hpp"

namespace nxrt::mock {

class MockKernel : public nxrt::sdk::Kernel {
 public:
  MockKernel(std::shared_ptr<MockEpState> state, std::string op);
  ~MockKernel() override;

  uint64_t id() const { return id_; }
  // Runs the op now (compute outside a capture, or replay).
  void Run(nxrt::sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
           std::span<nxrt_value> outputs);

  void Compute(nxrt::sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override;
  void SetConstantInputs(std::span<const nxrt_bool> flags) override;
  void PrepareConstantInputs(std::span<const nxrt_constant_input> constants) override;
  std::shared_ptr<nxrt::sdk::SharedState> ShareableConstantState() override;
  bool AdoptShareableConstantState(const std::shared_ptr<nxrt::sdk::SharedState>& state) override;
  void SetCaptureSeqIndependent(bool independent) override;
  bool CaptureSafe() const override;
  bool ServesOtherShapes() const override;
  bool TelemetryArm(uint32_t request_id) override;
  void TelemetryReset() override;
  std::optional<nxrt_telemetry> TelemetrySnapshot() override;
  void TelemetryDisarm() override;

 private:
  std::string Tag() const { return "k" + std::to_string(id_); }
  // On an EP with memory of its own: throws unless every buffer is in it.
  void RequireDeviceBuffers(const char* what, std::span<const nxrt_value> values) const;

  std::shared_ptr<MockEpState> state_;
  std::string op_;
  uint64_t id_;
  std::shared_ptr<nxrt::sdk::SharedState> constants_;
  bool armed_ = false;
};

}  // namespace nxrt::mock
