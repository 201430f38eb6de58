#include "recorder.hpp"

#include <string>

namespace nxrt::cpu {
namespace {

constexpr int kIndexBits = 20;
constexpr nxrt_graph_token kIndexMask = (nxrt_graph_token{1} << kIndexBits) - 1;

const char* SlotName(nxrt_graph_slot slot) {
  return slot == NXRT_GRAPH_SLOT_VERIFY ? "verify" : "primary";
}

// Unique across every CPU EP instance, so a token given to the wrong
// instance is refused.
nxrt_graph_token NextSerial() {
  static std::atomic<nxrt_graph_token> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

bool Recorder::Record(sdk::Kernel& kernel, std::span<const nxrt_value> inputs,
                      std::span<const nxrt_value> outputs) {
  std::lock_guard lock(mutex_);
  if (!open_slot_ || capture_thread_ != std::this_thread::get_id()) return false;
  if (!kernel.CaptureSafe()) {
    throw sdk::Error(NXRT_STATUS_FAILED_PRECONDITION,
                     "cpu EP: the kernel is not capture-safe; run it outside a device-graph "
                     "capture");
  }
  pending_->Add(&kernel, inputs, outputs);
  ++recorded_calls_[&kernel];
  return true;
}

void Recorder::KernelDestroyed(sdk::Kernel& kernel) noexcept {
  std::lock_guard lock(mutex_);
  auto held = recorded_calls_.find(&kernel);
  if (held == recorded_calls_.end()) return;
  auto forget = [&](Recording& recording) {
    const auto kernels = recording.kernels();
    for (size_t call = 0; call < kernels.size(); ++call) {
      if (kernels[call] == &kernel) recording.ForgetKernel(call);
    }
  };
  if (pending_) forget(*pending_);
  for (Entry& entry : entries_) {
    if (entry.recording) forget(*entry.recording);
  }
  recorded_calls_.erase(held);
}

void Recorder::Release(const Recording& recording) {
  for (const sdk::Kernel* kernel : recording.kernels()) {
    if (kernel == nullptr) continue;
    auto held = recorded_calls_.find(kernel);
    if (held != recorded_calls_.end() && --held->second == 0) recorded_calls_.erase(held);
  }
}

void Recorder::BeginCapture(nxrt_graph_slot slot) {
  std::lock_guard lock(mutex_);
  if (open_slot_) {
    throw sdk::Error(NXRT_STATUS_FAILED_PRECONDITION,
                     std::string("cpu EP: a capture of the ") + SlotName(*open_slot_) +
                         " slot is already open; end it before beginning another");
  }
  pending_ = std::make_unique<Recording>();
  open_slot_ = slot;
  capture_thread_ = std::this_thread::get_id();
  set_capturing(true);
}

nxrt_graph_token Recorder::EndCapture(nxrt_graph_slot slot) {
  std::lock_guard lock(mutex_);
  if (!open_slot_ || *open_slot_ != slot) {
    throw sdk::Error(NXRT_STATUS_FAILED_PRECONDITION, std::string("cpu EP: end_capture of the ") +
                                                          SlotName(slot) +
                                                          " slot without a matching begin_capture");
  }
  open_slot_.reset();
  set_capturing(false);
  std::unique_ptr<Recording> recording = std::move(pending_);
  recording->Seal();
  size_t index = 0;
  while (index < entries_.size() && entries_[index].token != 0) ++index;
  if (index > kIndexMask) {
    Release(*recording);
    throw sdk::Error(NXRT_STATUS_UNAVAILABLE,
                     "cpu EP: too many device graphs held at once; reset some before capturing");
  }
  if (index == entries_.size()) entries_.emplace_back();
  const nxrt_graph_token token = (NextSerial() << kIndexBits) | index;
  entries_[index] = Entry{token, std::move(recording)};
  return token;
}

Recorder::Entry& Recorder::Find(nxrt_graph_token token, const char* action) {
  const size_t index = token & kIndexMask;
  if (token == 0 || index >= entries_.size() || entries_[index].token != token) {
    throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT,
                     std::string("cpu EP: ") + action + " of graph token " + std::to_string(token) +
                         ", which this EP never issued or has reset; capture again");
  }
  return entries_[index];
}

void Recorder::Replay(nxrt_graph_token token) {
  Recording* recording;
  {
    std::lock_guard lock(mutex_);
    recording = Find(token, "replay").recording.get();
    if (recording->stale()) {
      throw sdk::Error(NXRT_STATUS_FAILED_PRECONDITION,
                       "cpu EP: graph token " + std::to_string(token) +
                           " calls a kernel destroyed before the graph was reset; reset graphs "
                           "before destroying their kernels");
    }
  }
  recording->Replay(host_, threads_);
}

void Recorder::Reset(nxrt_graph_token token) {
  std::lock_guard lock(mutex_);
  Entry& entry = Find(token, "reset");
  Release(*entry.recording);
  entry = Entry{};
}

}  // namespace nxrt::cpu
