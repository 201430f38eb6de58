// The mock execution provider (libep_mock.so): claims and declines what its
// options say, makes MockKernels, and captures device graphs by recording
// kernel calls. Used by tests to drive the host and the session precisely.
#pragma once

#include <memory>
#include <string>

#include "mock_ep_state.hpp"
#include "nxrt/ep_sdk.hpp"

namespace nxrt::mock {

class MockEp : public nxrt::sdk::ExecutionProvider {
 public:
  MockEp(const nxrt::sdk::Host& host, const nxrt::sdk::Options& options);
  ~MockEp() override;

  // Null unless the instance has memory of its own (libep_mock_device.so).
  DeviceMemory* device_memory() const { return state_->device_memory(); }
  void Log(const std::string& entry) const { state_->Log(entry); }

 protected:
  MockEp(const nxrt::sdk::Host& host, const nxrt::sdk::Options& options, bool own_memory);

  nxrt::sdk::ClaimResult Claim(const nxrt::sdk::Node& node, int64_t opset,
                               std::span<const nxrt_value_info> inputs,
                               std::span<const nxrt_layout> layouts) override;
  std::unique_ptr<nxrt::sdk::Kernel> CreateKernel(const nxrt_artifact_config& config,
                                                  const nxrt::sdk::Node& node,
                                                  std::span<const nxrt_shape> inputs,
                                                  int64_t opset) override;

  bool DeviceGraphsSupported() const override;
  void BeginCapture(nxrt_graph_slot slot) override;
  nxrt_graph_token EndCapture(nxrt_graph_slot slot) override;
  void Replay(nxrt_graph_token token) override;
  void Reset(nxrt_graph_token token) override;

 private:
  std::shared_ptr<MockEpState> state_;
};

}  // namespace nxrt::mock
