#include "cpu_ep.hpp"

#include <cblas.h>

#include <charconv>
#include <string>

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

}  // namespace

CpuEp::CpuEp(const sdk::Host& host, const sdk::Options& options) : host_(host) {
  int threads = 1;
  for (size_t i = 0; i < options.size(); ++i) {
    const auto [key, value] = options.at(i);
    if (key == "threads") {
      threads = ParseThreads(std::string(value));
    } else {
      throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT,
                       "cpu EP: unknown option '" + std::string(key) + "' (known: threads)");
    }
  }
  openblas_set_num_threads(threads);
}

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
  const std::string op(node.op_type());
  const OpDefinition* definition = CpuOps().Find(node.domain(), op);
  if (definition == nullptr || opset < definition->since_opset) {
    throw sdk::Error(NXRT_STATUS_UNSUPPORTED, op + ": not implemented by the cpu EP");
  }
  if (definition->create_with_host) {
    return definition->create_with_host(host_, node, inputs, opset);
  }
  return definition->create(node, inputs, opset);
}

}  // namespace nxrt::cpu
