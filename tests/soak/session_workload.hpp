// The session soak: an Environment and a session of a small model created,
// run once and destroyed, again and again, so the CPU plugin is loaded and
// unloaded (dlopen, dlclose) every time, as a process that opens models on
// demand would. Nothing of a closed session may stay behind: not memory, not
// a file descriptor, not the plugin's mapping.
#pragma once

#include <cstdint>

#include "nxrt/support/status.hpp"
#include "workload.hpp"

namespace nxrt::soak {

struct SessionSoak {
  int64_t sessions = 10000;
};

Result<WorkloadResult> RunSessionSoak(const SoakSettings& settings, const SessionSoak& soak);

}  // namespace nxrt::soak
