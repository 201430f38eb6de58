// The device-graph state of one CPU EP instance: the capture open on one
// thread (with the slot it is for) and the recordings the host holds tokens
// of. As the EP's sdk::ComputeRecorder it is offered every compute call of
// the EP's kernels while a capture is open, and told before a kernel goes;
// kernels share it with the EP, so it outlives whichever goes first.
//
// A token carries its recording's index in the low bits and a serial unique
// across EP instances in the high bits, so finding a recording is one index
// and one compare, and a token that was reset, never issued or issued by
// another instance is refused with an error. A recording whose kernel is
// destroyed before the host resets it becomes stale and refuses to replay.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <unordered_map>
#include <vector>

#include "nxrt/ep_sdk.hpp"
#include "recording.hpp"

namespace nxrt::cpu {

class Recorder : public sdk::ComputeRecorder {
 public:
  // `threads`: the EP's, which replays run on.
  Recorder(sdk::Host host, int threads) : host_(std::move(host)), threads_(threads) {}

  // Records the call when this thread holds the open capture (true); false
  // when the capture belongs to another thread, so the call runs now.
  bool Record(sdk::Kernel& kernel, std::span<const nxrt_value> inputs,
              std::span<const nxrt_value> outputs) override;
  void KernelDestroyed(sdk::Kernel& kernel) noexcept override;

  void BeginCapture(nxrt_graph_slot slot);
  nxrt_graph_token EndCapture(nxrt_graph_slot slot);
  void Replay(nxrt_graph_token token);
  void Reset(nxrt_graph_token token);

 private:
  struct Entry {
    nxrt_graph_token token = 0;  // 0: free
    std::unique_ptr<Recording> recording;
  };
  // The entry of `token`; throws naming `action` when there is none.
  Entry& Find(nxrt_graph_token token, const char* action);
  // Gives back the call counts `recording` holds on its kernels.
  void Release(const Recording& recording);

  sdk::Host host_;
  const int threads_;
  std::mutex mutex_;
  // How many calls of each kernel live recordings hold; a kernel absent
  // here is in none, so its destruction touches no recording.
  std::unordered_map<const sdk::Kernel*, size_t> recorded_calls_;
  std::optional<nxrt_graph_slot> open_slot_;
  std::thread::id capture_thread_;
  std::unique_ptr<Recording> pending_;
  std::vector<Entry> entries_;
};

}  // namespace nxrt::cpu
