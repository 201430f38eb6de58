#include "recording.hpp"

#include <string>

#include "parallel_blocks.hpp"

namespace nxrt::cpu {
namespace {

// A replay writes through the recorded addresses and reads nothing borrowed,
// so every output must already have its buffer and no value may be a
// sequence (its tensor list is only valid during the call).
void CheckRecordable(std::span<const nxrt_value> inputs, std::span<const nxrt_value> outputs) {
  for (const nxrt_value& v : inputs) {
    if (v.kind == NXRT_VALUE_SEQUENCE) {
      throw sdk::Error(NXRT_STATUS_FAILED_PRECONDITION,
                       "cpu EP: a sequence input cannot be recorded into a device graph; run the "
                       "node eagerly");
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const nxrt_value& v = outputs[i];
    if (v.kind == NXRT_VALUE_SEQUENCE ||
        (v.kind == NXRT_VALUE_TENSOR && v.tensor.data == nullptr && v.tensor.byte_size != 0)) {
      throw sdk::Error(NXRT_STATUS_FAILED_PRECONDITION,
                       "cpu EP: output " + std::to_string(i) +
                           " is not a preallocated tensor during capture; a captured call "
                           "cannot allocate");
    }
  }
}

}  // namespace

void Recording::CopyValue(const nxrt_value& value) {
  values_.push_back(value);
  dims_at_.push_back(dims_.size());
  if (value.kind == NXRT_VALUE_TENSOR && value.tensor.rank > 0) {
    dims_.insert(dims_.end(), value.tensor.dims, value.tensor.dims + value.tensor.rank);
  }
}

void Recording::Add(sdk::Kernel* kernel, std::span<const nxrt_value> inputs,
                    std::span<const nxrt_value> outputs) {
  CheckRecordable(inputs, outputs);
  calls_.push_back(Call{kernel, nullptr, nullptr, static_cast<uint32_t>(inputs.size()),
                        static_cast<uint32_t>(outputs.size()), values_.size()});
  kernels_.push_back(kernel);
  for (const nxrt_value& v : inputs) CopyValue(v);
  for (const nxrt_value& v : outputs) CopyValue(v);
}

void Recording::Seal() {
  for (size_t i = 0; i < values_.size(); ++i) {
    nxrt_tensor& t = values_[i].tensor;
    if (values_[i].kind == NXRT_VALUE_TENSOR && t.rank > 0) t.dims = dims_.data() + dims_at_[i];
  }
  for (Call& call : calls_) {
    call.inputs = values_.data() + call.first_value;
    call.outputs = call.inputs + call.input_count;
  }
  dims_at_.clear();
  dims_at_.shrink_to_fit();
}

void Recording::Replay(const sdk::Host& host, int threads) {
  sdk::ComputeContext no_services(host, nullptr);
  auto run_calls = [&] {
    for (const Call& call : calls_) {
      call.kernel->Compute(no_services, std::span<const nxrt_value>(call.inputs, call.input_count),
                           std::span<nxrt_value>(call.outputs, call.output_count));
    }
  };
  if (threads > 1 && with_crew_.load(std::memory_order_relaxed)) {
    if (RunWithCrew(threads, run_calls)) with_crew_.store(false, std::memory_order_relaxed);
  } else {
    run_calls();
  }
}

}  // namespace nxrt::cpu
