#include "recording_kernel.hpp"

#include <utility>

#include "recorder.hpp"

namespace nxrt::cpu {

RecordingKernel::RecordingKernel(std::unique_ptr<sdk::Kernel> inner,
                                 std::shared_ptr<Recorder> recorder, std::string name)
    : inner_(std::move(inner)), recorder_(std::move(recorder)), name_(std::move(name)) {}

RecordingKernel::~RecordingKernel() {
  recorder_->KernelDestroyed(*this);
}

void RecordingKernel::Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
                              std::span<nxrt_value> outputs) {
  if (recorder_->capturing() && recorder_->Record(*this, inputs, outputs)) return;
  inner_->Compute(ctx, inputs, outputs);
}

}  // namespace nxrt::cpu
