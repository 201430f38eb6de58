#include "mock_kernel.hpp"

#include <vector>

#include "call_log.hpp"
#include "mock_ops.hpp"

namespace nxrt::mock {
namespace {

// A copy of a kernel's constant inputs, shared between shape variants.
class MockConstants : public nxrt::sdk::SharedState {
 public:
  explicit MockConstants(std::vector<std::vector<std::byte>> bytes) : bytes_(std::move(bytes)) {
    Live().shared_states.fetch_add(1);
  }
  ~MockConstants() override { Live().shared_states.fetch_sub(1); }
  MockConstants(const MockConstants&) = delete;
  MockConstants& operator=(const MockConstants&) = delete;

 private:
  std::vector<std::vector<std::byte>> bytes_;
};

// Whether the host handed an output the bytes of an input (a view, or a
// fixed-capacity cache written in place); tests read it from the call log.
bool SharesInputBytes(std::span<const nxrt_value> inputs, std::span<const nxrt_value> outputs) {
  for (const nxrt_value& out : outputs) {
    if (out.kind != NXRT_VALUE_TENSOR || out.tensor.data == nullptr) continue;
    for (const nxrt_value& in : inputs) {
      if (in.kind == NXRT_VALUE_TENSOR && in.tensor.data == out.tensor.data) return true;
    }
  }
  return false;
}

}  // namespace

MockKernel::MockKernel(std::shared_ptr<MockEpState> state, std::string op)
    : state_(std::move(state)), op_(std::move(op)), id_(state_->AddKernel(this)) {
  Live().kernels.fetch_add(1);
}

MockKernel::~MockKernel() {
  state_->RemoveKernel(id_);
  Live().kernels.fetch_sub(1);
  state_->Log("destroy_kernel " + Tag());
}

void MockKernel::Run(nxrt::sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
                     std::span<nxrt_value> outputs) {
  if (state_->device_memory() != nullptr) {
    RequireDeviceBuffers("input", inputs);
    RequireDeviceBuffers("output", outputs);
  }
  RunMockOp(op_, ctx, inputs, outputs);
}

void MockKernel::RequireDeviceBuffers(const char* what, std::span<const nxrt_value> values) const {
  for (size_t i = 0; i < values.size(); ++i) {
    const nxrt_value& v = values[i];
    if (v.kind != NXRT_VALUE_TENSOR || v.tensor.data == nullptr || v.tensor.byte_size == 0) {
      continue;
    }
    if (v.tensor.memory != NXRT_MEMORY_DEVICE ||
        !state_->device_memory()->Holds(v.tensor.data, v.tensor.byte_size)) {
      throw nxrt::sdk::Error(NXRT_STATUS_INVALID_ARGUMENT,
                             "mock device kernel " + Tag() + " (" + op_ + "): " + what + " " +
                                 std::to_string(i) +
                                 " is not in this EP's memory; the host must copy it in");
    }
  }
}

void MockKernel::Compute(nxrt::sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
                         std::span<nxrt_value> outputs) {
  const uint64_t call = state_->CountCall(FaultPoint::kCompute);
  if (state_->RecordIfCapturing(this, id_, inputs, outputs)) {
    state_->Log("record " + Tag());
    return;
  }
  state_->Log("compute " + Tag() + (SharesInputBytes(inputs, outputs) ? " in-place" : ""));
  Run(ctx, inputs, outputs);
  if (call == state_->config().break_output_on_call && !outputs.empty()) {
    // Dims that need more bytes than the output holds: a kernel that broke
    // the ABI, which the host must catch before anything reads the output.
    state_->Log("break_output " + Tag());
    outputs[0].tensor.byte_size = 0;
  }
}

void MockKernel::SetConstantInputs(std::span<const nxrt_bool> flags) {
  std::string text;
  for (nxrt_bool f : flags) text += f ? '1' : '0';
  state_->Log("set_constant_inputs " + Tag() + " " + text);
}

void MockKernel::PrepareConstantInputs(std::span<const nxrt_constant_input> constants) {
  state_->CountCall(FaultPoint::kPrepare);
  state_->Log("prepare " + Tag() + " " + std::to_string(constants.size()));
  if (!state_->config().share_constants) return;
  std::vector<std::vector<std::byte>> bytes;
  for (const nxrt_constant_input& c : constants) {
    const auto* begin = static_cast<const std::byte*>(c.bytes);
    bytes.emplace_back(begin, begin + (begin ? c.byte_size : 0));
  }
  constants_ = std::make_shared<MockConstants>(std::move(bytes));
}

std::shared_ptr<nxrt::sdk::SharedState> MockKernel::ShareableConstantState() {
  state_->Log("share " + Tag() + (constants_ ? " some" : " none"));
  return constants_;
}

bool MockKernel::AdoptShareableConstantState(const std::shared_ptr<nxrt::sdk::SharedState>& state) {
  state_->CountCall(FaultPoint::kAdopt);
  const bool adopted =
      state_->config().share_constants && dynamic_cast<MockConstants*>(state.get()) != nullptr;
  if (adopted) constants_ = state;
  state_->Log("adopt " + Tag() + (adopted ? " adopted" : " declined"));
  return adopted;
}

void MockKernel::SetCaptureSeqIndependent(bool independent) {
  state_->Log("capture_decision " + Tag() + (independent ? " 1" : " 0"));
}

bool MockKernel::CaptureSafe() const {
  return state_->config().capture_safe;
}

bool MockKernel::ServesOtherShapes() const {
  const MockConfig& config = state_->config();
  return config.serves_other_shapes ||
         (config.serves_other_shapes_from > 0 && id_ >= config.serves_other_shapes_from);
}

bool MockKernel::TelemetryArm(uint32_t request_id) {
  state_->CountCall(FaultPoint::kTelemetryArm);
  armed_ = state_->config().telemetry.has_value();
  state_->Log("telemetry_arm " + Tag() + " " + std::to_string(request_id) +
              (armed_ ? " armed" : " nothing"));
  return armed_;
}

void MockKernel::TelemetryReset() {
  state_->Log("telemetry_reset " + Tag());
}

std::optional<nxrt_telemetry> MockKernel::TelemetrySnapshot() {
  state_->Log("telemetry_snapshot " + Tag());
  if (!armed_) return std::nullopt;
  return state_->config().telemetry;
}

void MockKernel::TelemetryDisarm() {
  armed_ = false;
  state_->Log("telemetry_disarm " + Tag());
}

}  // namespace nxrt::mock
