// What every CPU kernel shares: its capture-safety statement (true when
// compute allocates nothing and writes only into preallocated outputs, so a
// recorded call can be replayed without the host; the one allocation allowed
// is inside oneDNN, which builds a small argument map on every call it runs)
// and the claim and shape checks op families build on.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "dtype.hpp"
#include "ep_settings.hpp"
#include "nxrt/ep_sdk.hpp"
#include "op_registry.hpp"
#include "tensor.hpp"

namespace nxrt::cpu {

class CpuKernel : public sdk::Kernel {
 public:
  explicit CpuKernel(bool capture_safe) : capture_safe_(capture_safe) {}
  bool CaptureSafe() const override { return capture_safe_; }

  // Called once, right after the kernel is made and before any constant is
  // prepared, for the node named `node_name`. Kernels that no option shapes
  // ignore it.
  virtual void ApplySettings(const EpSettings& /*settings*/, std::string_view /*node_name*/) {}

 private:
  bool capture_safe_;
};

// The reason to decline when input `index` is absent, not a tensor, or of a
// dtype outside `List`; nullopt when it is fine.
template <typename List>
std::optional<std::string> CheckInputDtype(const sdk::Node& node,
                                           std::span<const nxrt_value_info> inputs, size_t index,
                                           List list) {
  const std::string op(node.op_type());
  if (index >= inputs.size() || inputs[index].kind == NXRT_VALUE_NONE) {
    return op + ": input " + std::to_string(index) + " is required";
  }
  if (inputs[index].kind != NXRT_VALUE_TENSOR) {
    return op + ": sequence inputs not supported";
  }
  if (!Contains(list, inputs[index].dtype)) {
    return op + ": dtype " + DtypeName(inputs[index].dtype) + " not supported";
  }
  return std::nullopt;
}

inline sdk::ClaimResult ClaimUnless(const std::optional<std::string>& reason) {
  return reason ? sdk::ClaimResult::Declined(*reason) : sdk::ClaimResult::Claimed();
}

// Claims when input 0 has a dtype in `List`.
template <typename List>
ClaimFn ClaimInputDtype(List list, size_t index = 0) {
  return [list, index](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
    return ClaimUnless(CheckInputDtype(node, inputs, index, list));
  };
}

// Fails, when the kernel is made, unless input `index` (when given) holds
// `count` elements: kernels read parameters such as a bias or a per-channel
// scale by position without checking. `what` names the input in the error.
inline void RequireElements(std::span<const nxrt_shape> inputs, size_t index, int64_t count,
                            const std::string& op, const char* what) {
  if (index >= inputs.size() || inputs[index].dtype == NXRT_DTYPE_UNDEFINED) return;
  const int64_t given =
      ElementCount(std::span<const int64_t>(inputs[index].dims, inputs[index].rank));
  if (given != count) {
    FailInvalid(op + ": input " + std::to_string(index) + " (" + what + ") has " +
                std::to_string(given) + " elements; it needs " + std::to_string(count) +
                "; fix its shape");
  }
}

}  // namespace nxrt::cpu
