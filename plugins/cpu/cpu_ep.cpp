#include "cpu_ep.hpp"

#include <charconv>
#include <string>

#include "cpu_kernel.hpp"
#include "device_graph/recorder.hpp"
#include "math_threads.hpp"
#include "op_registry.hpp"

namespace nxrt::cpu {
namespace {

int ParseThreads(const std::string& text) {
  int threads = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), threads);
  if (error != std::errc() || end != text.data() + text.size() || threads < 1) {
    throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT,
                     "cpu EP option threads=" + text + ": expected a positive integer");
  }
  return threads;
}

uint64_t ParseSeed(const std::string& text) {
  uint64_t seed = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seed);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT,
                     "cpu EP option seed=" + text + ": expected a non-negative integer");
  }
  return seed;
}

bool ParseFlag(const std::string& key, const std::string& text) {
  if (text != "0" && text != "1") {
    throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT,
                     "cpu EP option " + key + "=" + text + ": expected 0 or 1");
  }
  return text == "1";
}

}  // namespace

CpuEp::CpuEp(const sdk::Host& host, const sdk::Options& options) : host_(host) {
  bool device_graphs = true;
  for (size_t i = 0; i < options.size(); ++i) {
    const auto [key, value] = options.at(i);
    if (key == "threads") {
      settings_.threads = ParseThreads(std::string(value));
    } else if (key == "device_graphs") {
      device_graphs = ParseFlag(std::string(key), std::string(value));
    } else if (key == "seed") {
      settings_.seed = ParseSeed(std::string(value));
    } else if (key == "prepack") {
      settings_.prepack = ParseFlag(std::string(key), std::string(value));
    } else {
      throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT,
                       "cpu EP: unknown option '" + std::string(key) +
                           "' (known: threads, device_graphs, seed, prepack)");
    }
  }
  math_threads_ = std::make_unique<MathThreadLease>(settings_.threads);
  if (device_graphs) recorder_ = std::make_shared<Recorder>(host_, settings_.threads);
}

CpuEp::~CpuEp() = default;

sdk::ClaimResult CpuEp::Claim(const sdk::Node& node, int64_t opset,
                              std::span<const nxrt_value_info> inputs,
                              std::span<const nxrt_layout> layouts) {
  const std::string op(node.op_type());
  const OpDefinition* definition = CpuOps().Find(node.domain(), op);
  if (definition == nullptr) {
    if (node.domain().empty()) return sdk::ClaimResult::Declined(op + ": op not implemented");
    return sdk::ClaimResult::Declined(op + ": op of domain '" + std::string(node.domain()) +
                                      "' not implemented");
  }
  if (opset < definition->since_opset) {
    return sdk::ClaimResult::Declined(op + ": opset " + std::to_string(opset) +
                                      " not implemented (from " +
                                      std::to_string(definition->since_opset) + ")");
  }
  for (nxrt_layout layout : layouts) {
    if (layout != NXRT_LAYOUT_CONTIGUOUS) {
      return sdk::ClaimResult::Declined(op + ": only contiguous layouts are supported");
    }
  }
  return definition->claim(node, opset, inputs);
}

std::unique_ptr<sdk::Kernel> CpuEp::CreateKernel(const nxrt_artifact_config& /*config*/,
                                                 const sdk::Node& node,
                                                 std::span<const nxrt_shape> inputs,
                                                 int64_t opset) {
  return MakeKernel(node, inputs, opset);
}

std::shared_ptr<sdk::ComputeRecorder> CpuEp::CallRecorder() {
  return recorder_;
}

std::unique_ptr<CpuKernel> CpuEp::MakeKernel(const sdk::Node& node,
                                             std::span<const nxrt_shape> inputs, int64_t opset) {
  const std::string op(node.op_type());
  const OpDefinition* definition = CpuOps().Find(node.domain(), op);
  if (definition == nullptr || opset < definition->since_opset) {
    throw sdk::Error(NXRT_STATUS_UNSUPPORTED, op + ": not implemented by the cpu EP");
  }
  std::unique_ptr<CpuKernel> kernel = definition->create_with_host
                                          ? definition->create_with_host(host_, node, inputs, opset)
                                          : definition->create(node, inputs, opset);
  if (!kernel) throw sdk::Error(NXRT_STATUS_INTERNAL, op + ": the cpu EP made no kernel");
  kernel->ApplySettings(settings_, node.name());
  return kernel;
}

Recorder& CpuEp::RequireRecorder() const {
  if (!recorder_) {
    throw sdk::Error(NXRT_STATUS_UNSUPPORTED,
                     "cpu EP: device graphs are off (device_graphs=0); set device_graphs=1 to "
                     "capture");
  }
  return *recorder_;
}

void CpuEp::BeginCapture(nxrt_graph_slot slot) {
  RequireRecorder().BeginCapture(slot);
}

nxrt_graph_token CpuEp::EndCapture(nxrt_graph_slot slot) {
  return RequireRecorder().EndCapture(slot);
}

void CpuEp::Replay(nxrt_graph_token token) {
  RequireRecorder().Replay(token);
}

void CpuEp::Reset(nxrt_graph_token token) {
  RequireRecorder().Reset(token);
}

}  // namespace nxrt::cpu
