#include "generate/step_latency.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "common/percentile.hpp"

namespace nxrt::cli {

StepLatency SummarizeSteps(std::span<const double> step_us) {
  StepLatency latency;
  if (step_us.empty()) return latency;
  std::vector<double> sorted(step_us.begin(), step_us.end());
  std::sort(sorted.begin(), sorted.end());
  latency.median_us = Percentile(sorted, 50);
  latency.p90_us = Percentile(sorted, 90);
  latency.min_us = sorted.front();
  latency.max_us = sorted.back();
  const double total_us = std::accumulate(sorted.begin(), sorted.end(), 0.0);
  if (total_us > 0) latency.tokens_per_s = static_cast<double>(sorted.size()) * 1e6 / total_us;
  return latency;
}

}  // namespace nxrt::cli
