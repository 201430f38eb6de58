#include "plugin_host/kernel.hpp"

#include <cstddef>
#include <cstring>
#include <vector>

#include "plugin_host/execution_provider.hpp"
#include "plugin_host/plugin_status.hpp"

namespace nxrt::plugin_host {

Kernel::Kernel(std::shared_ptr<ExecutionProvider> provider, std::shared_ptr<const NodeView> node,
               nxrt_kernel* handle)
    : provider_(std::move(provider)),
      node_(std::move(node)),
      api_(&provider_->plugin().kernel_api()),
      handle_(handle) {}

Kernel::~Kernel() {
  api_->destroy(handle_);
}

std::string Kernel::Describe() const {
  return node_->Describe() + " on " + provider_->Describe();
}

Status Kernel::Compute(ComputeServices& services, std::span<const nxrt_value> inputs,
                       std::span<nxrt_value> outputs) {
  nxrt_compute_context ctx{&services};
  return ComputeStatus(
      api_->compute(handle_, &ctx, inputs.data(), inputs.size(), outputs.data(), outputs.size()));
}

Status Kernel::ComputeStatus(nxrt_status* failed) const {
  if (failed == nullptr) return Status::Ok();
  return TakeStatus(failed).WithContext(Describe() + ": compute failed");
}

void Kernel::SetConstantInputs(std::span<const bool> flags) {
  if (api_->set_constant_inputs == nullptr) return;
  const std::vector<nxrt_bool> abi_flags(flags.begin(), flags.end());
  api_->set_constant_inputs(handle_, abi_flags.data(), abi_flags.size());
}

void Kernel::SetConstantInputs(const std::vector<bool>& flags) {
  if (api_->set_constant_inputs == nullptr) return;
  const std::vector<nxrt_bool> abi_flags(flags.begin(), flags.end());
  api_->set_constant_inputs(handle_, abi_flags.data(), abi_flags.size());
}

Status Kernel::PrepareConstantInputs(std::span<const nxrt_constant_input> constants) {
  if (api_->prepare_constant_inputs == nullptr) return Status::Ok();
  const nxrt_constant_input* array = constants.data();
  // A plugin before 1.2 steps through the array at its own, shorter size.
  constexpr size_t kOneOneSize = offsetof(nxrt_constant_input, bytes_persist);
  std::vector<std::byte> older;
  if (NXRT_EP_ABI_VERSION_MINOR_OF(provider_->plugin().abi_version()) < 2 && !constants.empty()) {
    older.resize(constants.size() * kOneOneSize);
    for (size_t i = 0; i < constants.size(); ++i) {
      nxrt_constant_input constant = constants[i];
      constant.struct_size = kOneOneSize;
      std::memcpy(older.data() + i * kOneOneSize, &constant, kOneOneSize);
    }
    array = reinterpret_cast<const nxrt_constant_input*>(older.data());
  }
  return TakeStatus(api_->prepare_constant_inputs(handle_, array, constants.size()))
      .WithContext(Describe() + ": preparing constant inputs failed");
}

SharedConstantState Kernel::ShareableConstantState() {
  // Without release the host could never give a reference back, so a plugin
  // that cannot release shares nothing.
  if (api_->shareable_constant_state == nullptr || api_->shared_state_release == nullptr) {
    return {};
  }
  nxrt_shared_state* state = api_->shareable_constant_state(handle_);
  if (state == nullptr) return {};
  return SharedConstantState(provider_->plugin_ptr(), state);
}

Result<bool> Kernel::AdoptShareableConstantState(const SharedConstantState& state) {
  if (!state || api_->adopt_shareable_constant_state == nullptr) return false;
  nxrt_bool adopted = 0;
  NXRT_RETURN_IF_ERROR(
      TakeStatus(api_->adopt_shareable_constant_state(handle_, state.handle(), &adopted))
          .WithContext(Describe() + ": adopting a sibling's constant state failed"));
  return adopted != 0;
}

void Kernel::SetCaptureSeqIndependent(bool independent) {
  if (api_->set_capture_seq_independent) {
    api_->set_capture_seq_independent(handle_, independent ? 1 : 0);
  }
}

bool Kernel::capture_safe() const {
  return api_->capture_safe != nullptr && api_->capture_safe(handle_) != 0;
}

bool Kernel::serves_other_shapes() const {
  return api_->serves_other_shapes != nullptr && api_->serves_other_shapes(handle_) != 0;
}

Result<bool> Kernel::TelemetryArm(uint32_t request_id) {
  if (api_->telemetry_arm == nullptr) return false;
  nxrt_bool armed = 0;
  NXRT_RETURN_IF_ERROR(TakeStatus(api_->telemetry_arm(handle_, request_id, &armed))
                           .WithContext(Describe() + ": arming telemetry failed"));
  return armed != 0;
}

Status Kernel::TelemetryReset() {
  if (api_->telemetry_reset == nullptr) return Status::Ok();
  return TakeStatus(api_->telemetry_reset(handle_))
      .WithContext(Describe() + ": resetting telemetry failed");
}

Result<std::optional<nxrt_telemetry>> Kernel::TelemetrySnapshot() {
  if (api_->telemetry_snapshot == nullptr) return std::optional<nxrt_telemetry>();
  nxrt_telemetry telemetry{};
  telemetry.struct_size = sizeof(nxrt_telemetry);
  nxrt_bool observed = 0;
  NXRT_RETURN_IF_ERROR(TakeStatus(api_->telemetry_snapshot(handle_, &telemetry, &observed))
                           .WithContext(Describe() + ": telemetry snapshot failed"));
  if (!observed) return std::optional<nxrt_telemetry>();
  return std::optional<nxrt_telemetry>(telemetry);
}

Status Kernel::TelemetryDisarm() {
  if (api_->telemetry_disarm == nullptr) return Status::Ok();
  return TakeStatus(api_->telemetry_disarm(handle_))
      .WithContext(Describe() + ": disarming telemetry failed");
}

}  // namespace nxrt::plugin_host
