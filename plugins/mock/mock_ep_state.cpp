#include "mock_ep_state.hpp"

#include <atomic>

#include "call_log.hpp"
#include "mock_kernel.hpp"

namespace nxrt::mock {
namespace {

using nxrt::sdk::Error;

const char* SlotName(nxrt_graph_slot slot) {
  return slot == NXRT_GRAPH_SLOT_VERIFY ? "verify" : "primary";
}

// Tokens are unique across every mock instance, so a token given to the
// wrong instance is caught.
nxrt_graph_token NextToken() {
  static std::atomic<nxrt_graph_token> next{1};
  return next.fetch_add(1);
}

void CopyValue(const nxrt_value& from, nxrt_value& to, std::vector<std::vector<int64_t>>& dims) {
  to = from;
  if (from.kind == NXRT_VALUE_TENSOR && from.tensor.rank > 0) {
    dims.emplace_back(from.tensor.dims, from.tensor.dims + from.tensor.rank);
  }
}

}  // namespace

MockEpState::MockEpState(nxrt::sdk::Host host, MockConfig config, bool own_memory)
    : host_(std::move(host)),
      config_(std::move(config)),
      device_memory_(own_memory ? std::make_unique<DeviceMemory>() : nullptr) {}

void MockEpState::Log(const std::string& entry) const {
  LogCall(config_.log_id, entry);
}

uint64_t MockEpState::CountCall(FaultPoint point) {
  uint64_t call;
  {
    std::lock_guard lock(mutex_);
    call = ++calls_[point];
  }
  auto chosen = config_.fail_on_call.find(point);
  if (chosen != config_.fail_on_call.end() && chosen->second == call) {
    Log(std::string("fault ") + FaultPointName(point) + " " + std::to_string(call));
    throw Error(NXRT_STATUS_INTERNAL, std::string("mock EP: injected failure in ") +
                                          FaultPointName(point) + " (call " + std::to_string(call) +
                                          ")");
  }
  return call;
}

uint64_t MockEpState::AddKernel(MockKernel* kernel) {
  std::lock_guard lock(mutex_);
  const uint64_t id = next_kernel_id_++;
  live_kernels_[id] = kernel;
  return id;
}

void MockEpState::RemoveKernel(uint64_t kernel_id) {
  std::lock_guard lock(mutex_);
  live_kernels_.erase(kernel_id);
}

bool MockEpState::RecordIfCapturing(MockKernel* kernel, uint64_t kernel_id,
                                    std::span<const nxrt_value> inputs,
                                    std::span<const nxrt_value> outputs) {
  std::lock_guard lock(mutex_);
  if (!capturing_) return false;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].kind == NXRT_VALUE_TENSOR && outputs[i].tensor.data == nullptr &&
        outputs[i].tensor.byte_size != 0) {
      throw Error(NXRT_STATUS_FAILED_PRECONDITION,
                  "mock EP: output " + std::to_string(i) +
                      " is not preallocated during capture; a captured call cannot allocate");
    }
  }
  RecordedCall call;
  call.kernel = kernel;
  call.kernel_id = kernel_id;
  call.inputs.resize(inputs.size());
  call.outputs.resize(outputs.size());
  call.dims.reserve(inputs.size() + outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) CopyValue(inputs[i], call.inputs[i], call.dims);
  for (size_t i = 0; i < outputs.size(); ++i) CopyValue(outputs[i], call.outputs[i], call.dims);
  // Point the copies at the owned dims, now that the storage no longer moves.
  size_t next_dims = 0;
  for (auto* values : {&call.inputs, &call.outputs}) {
    for (nxrt_value& v : *values) {
      if (v.kind == NXRT_VALUE_TENSOR && v.tensor.rank > 0) {
        v.tensor.dims = call.dims[next_dims++].data();
      }
    }
  }
  pending_.push_back(std::move(call));
  return true;
}

void MockEpState::BeginCapture(nxrt_graph_slot slot) {
  CountCall(FaultPoint::kBeginCapture);
  std::lock_guard lock(mutex_);
  if (!config_.device_graphs) {
    throw Error(NXRT_STATUS_UNSUPPORTED, "mock EP: device graphs are off (device_graphs=0)");
  }
  if (capturing_) {
    throw Error(NXRT_STATUS_FAILED_PRECONDITION, std::string("mock EP: a capture of the ") +
                                                     SlotName(*capturing_) +
                                                     " slot is already open");
  }
  capturing_ = slot;
  pending_.clear();
  Log(std::string("begin_capture ") + SlotName(slot));
}

nxrt_graph_token MockEpState::EndCapture(nxrt_graph_slot slot) {
  CountCall(FaultPoint::kEndCapture);
  std::lock_guard lock(mutex_);
  if (!capturing_ || *capturing_ != slot) {
    throw Error(NXRT_STATUS_FAILED_PRECONDITION, std::string("mock EP: end_capture of the ") +
                                                     SlotName(slot) +
                                                     " slot without a matching begin_capture");
  }
  capturing_.reset();
  const nxrt_graph_token token = NextToken();
  graphs_[token] = std::move(pending_);
  pending_.clear();
  Live().graphs.fetch_add(1);
  Log(std::string("end_capture ") + SlotName(slot) + " t" + std::to_string(token) +
      " calls=" + std::to_string(graphs_[token].size()));
  return token;
}

void MockEpState::Replay(nxrt_graph_token token) {
  CountCall(FaultPoint::kReplay);
  std::vector<RecordedCall>* calls;
  {
    std::lock_guard lock(mutex_);
    auto found = graphs_.find(token);
    if (found == graphs_.end()) {
      throw Error(NXRT_STATUS_INVALID_ARGUMENT,
                  "mock EP: replay of unknown graph token " + std::to_string(token));
    }
    for (const RecordedCall& call : found->second) {
      if (!live_kernels_.contains(call.kernel_id)) {
        throw Error(NXRT_STATUS_FAILED_PRECONDITION,
                    "mock EP: graph t" + std::to_string(token) + " replays kernel k" +
                        std::to_string(call.kernel_id) + ", destroyed before the graph was reset");
      }
    }
    calls = &found->second;
  }
  Log("replay t" + std::to_string(token));
  nxrt::sdk::ComputeContext no_services(host_, nullptr);
  for (RecordedCall& call : *calls) call.kernel->Run(no_services, call.inputs, call.outputs);
}

void MockEpState::Reset(nxrt_graph_token token) {
  CountCall(FaultPoint::kReset);
  std::lock_guard lock(mutex_);
  if (graphs_.erase(token) == 0) {
    throw Error(NXRT_STATUS_INVALID_ARGUMENT,
                "mock EP: reset of unknown graph token " + std::to_string(token));
  }
  Live().graphs.fetch_sub(1);
  Log("reset t" + std::to_string(token));
}

void MockEpState::DropAllGraphs() {
  std::lock_guard lock(mutex_);
  Live().graphs.fetch_sub(static_cast<int64_t>(graphs_.size()));
  graphs_.clear();
}

}  // namespace nxrt::mock
