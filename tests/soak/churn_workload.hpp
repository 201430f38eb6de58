// The shape-churn soak: one session of the bundled BERT-like encoder layer
// fed a batch and sequence length drawn afresh for every run (never the
// previous run's), as a server batching requests of every length. The
// kernel cache must keep at most its bound of variants per node however
// many shapes go by, and memory must not grow with the shapes seen.
#pragma once

#include <cstdint>
#include <memory>

#include "nxrt/environment.hpp"
#include "nxrt/support/status.hpp"
#include "workload.hpp"

namespace nxrt::soak {

struct ChurnSoak {
  int64_t runs = 20000;
  int64_t max_batch = 8;  // batch and sequence are drawn from 1 to these
  int64_t max_sequence = 256;
};

Result<WorkloadResult> RunChurnSoak(std::shared_ptr<Environment> environment,
                                    const SoakSettings& settings, const ChurnSoak& soak);

}  // namespace nxrt::soak
