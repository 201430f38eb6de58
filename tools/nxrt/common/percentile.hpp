// Latency percentiles as numpy computes them by default (linear interpolation
// between the nearest ranks), so nxrt's numbers line up with the Python
// scripts that time ONNX Runtime.
#pragma once

#include <span>

namespace nxrt::cli {

// The q-th percentile (0..100) of ascending `sorted`, which must not be empty.
double Percentile(std::span<const double> sorted, double q);

}  // namespace nxrt::cli
