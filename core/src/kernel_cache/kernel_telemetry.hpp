// Per-request telemetry summed over a cache's kernels, one kernel per node
// (shape variants of a node share what they measure, so counting each
// variant would count the same traffic again).
#pragma once

#include <cstdint>
#include <optional>

#include "nxrt/ep_abi.h"
#include "nxrt/support/status.hpp"

namespace nxrt::kernel_cache {

struct TelemetryTotals {
  uint64_t uploaded_bytes = 0;
  uint64_t committed_bytes = 0;
  uint64_t logical_bytes = 0;
  uint64_t unique_bytes = 0;
  uint64_t page_ins = 0;
  // Only when every kernel that observed anything reported it.
  std::optional<uint64_t> physical_bytes;
  // 1 - min(physical / logical, 1), when physical bytes are known and some
  // logical bytes were asked for.
  std::optional<double> byte_hit_rate;
};

// Adds snapshots one at a time with overflow checks, then derives the totals.
class TelemetrySum {
 public:
  // An Internal error naming the field that would overflow; the sum is then
  // unchanged.
  Status Add(const nxrt_telemetry& snapshot);
  TelemetryTotals Totals() const;

 private:
  TelemetryTotals sum_;
  uint64_t physical_bytes_ = 0;
  bool observed_ = false;
  bool physical_complete_ = true;
};

}  // namespace nxrt::kernel_cache
