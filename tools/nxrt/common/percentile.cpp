#include "common/percentile.hpp"

#include <algorithm>
#include <cstddef>

namespace nxrt::cli {

double Percentile(std::span<const double> sorted, double q) {
  const double rank = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(rank);
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = rank - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

}  // namespace nxrt::cli
