// The mock's call log and live-object counters: what tests read through the
// functions declared in mock_api.h to check the exact order of the host's
// calls.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace nxrt::mock {

// Appends `entry` to the log named `log_id`; thread-safe.
void LogCall(const std::string& log_id, const std::string& entry);

struct LiveCounts {
  std::atomic<int64_t> eps{0};
  std::atomic<int64_t> kernels{0};
  std::atomic<int64_t> shared_states{0};
  std::atomic<int64_t> graphs{0};
};
LiveCounts& Live();

}  // namespace nxrt::mock
