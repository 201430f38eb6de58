// The decode soak: greedy token generation with the bundled decoder's KV
// cache growing by one column per step, started over on a new prompt of a
// random length every `reset_every` steps, as a server handing one session
// request after request. The prefill runs eagerly and each decode step on
// the Primary device-graph slot, as `nxrt generate` runs them.
#pragma once

#include <cstdint>
#include <memory>

#include "nxrt/environment.hpp"
#include "nxrt/support/status.hpp"
#include "workload.hpp"

namespace nxrt::soak {

struct DecodeSoak {
  int64_t steps = 100000;  // decode steps; the prefills come on top
  int64_t reset_every = 200;
  int64_t max_prompt = 128;  // prompts are 1 to this many tokens; the first is the longest
};

Result<WorkloadResult> RunDecodeSoak(std::shared_ptr<Environment> environment,
                                     const SoakSettings& settings, const DecodeSoak& soak);

}  // namespace nxrt::soak
