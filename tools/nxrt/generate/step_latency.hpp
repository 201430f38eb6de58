// The decode steps' latency in a few numbers: median, 90th percentile
// (linear interpolation between nearest ranks, numpy's default, so scripts
// comparing with ONNX Runtime line up), min, max, and tokens per second
// over all steps.
#pragma once

#include <span>

namespace nxrt::cli {

struct StepLatency {
  double median_us = 0;
  double p90_us = 0;
  double min_us = 0;
  double max_us = 0;
  double tokens_per_s = 0;
};

// All zeros when no step ran.
StepLatency SummarizeSteps(std::span<const double> step_us);

}  // namespace nxrt::cli
