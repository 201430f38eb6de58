#include "mock_ep.hpp"

#include "call_log.hpp"
#include "mock_kernel.hpp"

namespace nxrt::mock {

MockEp::MockEp(const nxrt::sdk::Host& host, const nxrt::sdk::Options& options)
    : MockEp(host, options, false) {}

MockEp::MockEp(const nxrt::sdk::Host& host, const nxrt::sdk::Options& options, bool own_memory)
    : state_(std::make_shared<MockEpState>(host, MockConfig::Parse(options), own_memory)) {
  if (state_->config().unavailable) {
    throw nxrt::sdk::Error(NXRT_STATUS_UNAVAILABLE, *state_->config().unavailable);
  }
  Live().eps.fetch_add(1);
  state_->Log("create_ep");
}

MockEp::~MockEp() {
  state_->DropAllGraphs();
  Live().eps.fetch_sub(1);
  state_->Log("destroy_ep");
}

nxrt::sdk::ClaimResult MockEp::Claim(const nxrt::sdk::Node& node, int64_t /*opset*/,
                                     std::span<const nxrt_value_info> /*inputs*/,
                                     std::span<const nxrt_layout> /*layouts*/) {
  const std::string op(node.op_type());
  state_->CountCall(FaultPoint::kClaim);
  const MockConfig& config = state_->config();
  nxrt::sdk::ClaimResult result = nxrt::sdk::ClaimResult::Claimed();
  if (auto declined = config.declined_ops.find(op); declined != config.declined_ops.end()) {
    result = nxrt::sdk::ClaimResult::Declined(declined->second);
  } else if (!config.claim_all && !config.claimed_ops.contains(op)) {
    result = nxrt::sdk::ClaimResult::Declined("the mock EP was not told to claim " + op);
  }
  state_->Log("claim " + op + (result.claimed ? " claimed" : " declined"));
  return result;
}

std::unique_ptr<nxrt::sdk::Kernel> MockEp::CreateKernel(const nxrt_artifact_config& /*config*/,
                                                        const nxrt::sdk::Node& node,
                                                        std::span<const nxrt_shape> inputs,
                                                        int64_t /*opset*/) {
  const std::string op(node.op_type());
  state_->CountCall(FaultPoint::kCreateKernel);
  std::string shapes;
  for (const nxrt_shape& s : inputs) {
    shapes += " [";
    for (size_t d = 0; d < s.rank; ++d) {
      if (d > 0) shapes += ',';
      shapes += std::to_string(s.dims[d]);
    }
    shapes += "]";
  }
  auto kernel = std::make_unique<MockKernel>(state_, op);
  state_->Log("create_kernel " + op + " k" + std::to_string(kernel->id()) + shapes);
  return kernel;
}

bool MockEp::DeviceGraphsSupported() const {
  return state_->config().device_graphs;
}
void MockEp::BeginCapture(nxrt_graph_slot slot) {
  state_->BeginCapture(slot);
}
nxrt_graph_token MockEp::EndCapture(nxrt_graph_slot slot) {
  return state_->EndCapture(slot);
}
void MockEp::Replay(nxrt_graph_token token) {
  state_->Replay(token);
}
void MockEp::Reset(nxrt_graph_token token) {
  state_->Reset(token);
}

}  // namespace nxrt::mock
