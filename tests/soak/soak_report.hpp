// The soak's verdict: per workload, its resources at the start, after
// warm-up and at the end, the slope of each after warm-up against its
// threshold, its counters and any bound it broke; then one table of all.
#pragma once

#include <filesystem>
#include <optional>
#include <span>

#include "nxrt/support/status.hpp"
#include "workload.hpp"

namespace nxrt::soak {

struct Thresholds {
  double warmup_fraction = 0.1;  // of each workload's steps, left out of the fit
  double rss_kib = 1.0;          // per 1,000 steps
  std::optional<double> heap_kib;
  double fds = 0.0;
};

// As soon as a workload ends.
void PrintWorkload(const WorkloadResult& result, const Thresholds& thresholds);
// The table of every workload; true when each kept within every threshold
// and bound.
bool PrintSummary(std::span<const WorkloadResult> results, const Thresholds& thresholds);
// Every sample as CSV (workload,step,rss_kib,open_fds,heap_bytes), to plot.
Status WriteSamples(std::span<const WorkloadResult> results, const std::filesystem::path& file);

}  // namespace nxrt::soak
