// The observable state of a Session beyond its outputs: where each node was
// placed and why others declined it, kernel-cache statistics, device-graph
// counters and summed kernel telemetry. `nxrt inspect` and tests read these.
#pragma once

#include "nxrt/support/export.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nxrt {

// An execution provider that declined a node, and its reason.
struct ClaimDecline {
  std::string provider;  // "mock#1": the plugin name and its priority position
  std::string reason;
};

struct NodePlacement {
  std::string node;  // the node's name
  std::string op_type;
  std::string domain;
  std::string provider;                // the EP that claimed it
  std::vector<ClaimDecline> declines;  // EPs earlier in priority order
  bool capture_eligible = false;
  std::string fused_into;  // the node whose kernel runs this one too; "" when none
};

struct KernelCacheStats {
  size_t entries = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t prebound_hits = 0;
  uint64_t evictions = 0;
  // Of the entries, the kernels that serve every shape of their ranks (ABI
  // 1.3's serves_other_shapes): a new shape of their node is a hit.
  size_t shape_general_entries = 0;
};

// Why a segment ran eagerly on a device-graph run instead of replaying.
enum class EagerFallbackReason : size_t {
  kWarmingUp = 0,   // first run at these shapes and addresses
  kShapeChanged,    // a bound tensor's shape differs from the capture
  kAddressChanged,  // a bound buffer moved
  kEpochChanged,    // a bound buffer was reallocated in place
  kNotCaptureSafe,  // a kernel of the segment cannot run inside a capture
  kCount,
};

NXRT_API const char* EagerFallbackReasonName(EagerFallbackReason reason);

struct DeviceGraphCounters {
  uint64_t captures = 0;
  uint64_t replays = 0;
  uint64_t resets = 0;
  std::array<uint64_t, static_cast<size_t>(EagerFallbackReason::kCount)> eager_fallbacks{};

  uint64_t fallbacks(EagerFallbackReason reason) const {
    return eager_fallbacks[static_cast<size_t>(reason)];
  }
};

// Kernel telemetry summed over one kernel per node.
struct TelemetryTotals {
  uint64_t uploaded_bytes = 0;
  uint64_t committed_bytes = 0;
  uint64_t logical_bytes = 0;
  uint64_t unique_bytes = 0;
  uint64_t page_ins = 0;
  std::optional<uint64_t> physical_bytes;  // only when every reporting kernel knew it
  // 1 - min(physical / logical, 1), when both are known.
  std::optional<double> byte_hit_rate;
};

}  // namespace nxrt
