// State one mock EP instance shares with its kernels: the configuration, the
// call log, fault counters, the live kernels, and device-graph recordings.
//
// Kernels hold it by shared_ptr, so it stays valid whichever of EP and kernel
// the host destroys first. A recording keeps kernel pointers and the exact
// input/output buffers and shapes of each compute call made during capture;
// replay runs them again with no dispatch and no allocation, and refuses a
// recording whose kernel was destroyed before the graph was reset.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "device_memory.hpp"
#include "mock_config.hpp"
#include "nxrt/ep_sdk.hpp"

namespace nxrt::mock {

class MockKernel;

// One compute call captured into a device graph, with owned shape storage.
struct RecordedCall {
  MockKernel* kernel = nullptr;
  uint64_t kernel_id = 0;
  std::vector<nxrt_value> inputs;
  std::vector<nxrt_value> outputs;
  std::vector<std::vector<int64_t>> dims;  // backs every tensor's dims above
};

class MockEpState {
 public:
  // With `own_memory` the instance has device memory of its own.
  MockEpState(nxrt::sdk::Host host, MockConfig config, bool own_memory);

  const nxrt::sdk::Host& host() const { return host_; }
  const MockConfig& config() const { return config_; }
  // Null when the instance computes on host memory.
  DeviceMemory* device_memory() const { return device_memory_.get(); }

  void Log(const std::string& entry) const;
  // Counts a call of `point` and throws the injected failure on the chosen one.
  uint64_t CountCall(FaultPoint point);

  uint64_t AddKernel(MockKernel* kernel);
  void RemoveKernel(uint64_t kernel_id);

  // True while a capture is open; the call is then recorded, not run.
  bool RecordIfCapturing(MockKernel* kernel, uint64_t kernel_id, std::span<const nxrt_value> inputs,
                         std::span<const nxrt_value> outputs);

  void BeginCapture(nxrt_graph_slot slot);
  nxrt_graph_token EndCapture(nxrt_graph_slot slot);
  void Replay(nxrt_graph_token token);
  void Reset(nxrt_graph_token token);
  // Graphs still held when the EP goes away.
  void DropAllGraphs();

 private:
  nxrt::sdk::Host host_;
  const MockConfig config_;
  const std::unique_ptr<DeviceMemory> device_memory_;
  std::mutex mutex_;
  std::map<FaultPoint, uint64_t> calls_;
  uint64_t next_kernel_id_ = 1;
  std::map<uint64_t, MockKernel*> live_kernels_;
  std::optional<nxrt_graph_slot> capturing_;
  std::vector<RecordedCall> pending_;
  std::map<nxrt_graph_token, std::vector<RecordedCall>> graphs_;
};

}  // namespace nxrt::mock
