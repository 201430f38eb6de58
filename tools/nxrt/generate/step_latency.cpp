#include "generate/step_latency.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

namespace nxrt::cli {
namespace {

double Percentile(const std::vector<double>& sorted, double q) {
  const double rank = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(rank);
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = rank - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

}  // namespace

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
