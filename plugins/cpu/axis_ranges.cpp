#include "axis_ranges.hpp"

#include <cstring>

namespace nxrt::cpu {

AxisGeometry AxisGeometryOf(std::span<const int64_t> dims, int64_t axis, size_t element_size) {
  AxisGeometry g;
  g.inner_bytes = element_size;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    if (d < axis) g.outer *= dims[d];
    if (d == axis) g.length = dims[d];
    if (d > axis) g.inner_bytes *= static_cast<size_t>(dims[d]);
  }
  return g;
}

void GatherAxisRange(const AxisGeometry& g, const std::byte* whole, int64_t begin, int64_t count,
                     std::byte* part) {
  const size_t run = static_cast<size_t>(count) * g.inner_bytes;
  if (run == 0) return;
  for (int64_t o = 0; o < g.outer; ++o) {
    std::memcpy(part + o * run, whole + (o * g.length + begin) * g.inner_bytes, run);
  }
}

void ScatterAxisRange(const AxisGeometry& g, std::byte* whole, int64_t begin, int64_t count,
                      const std::byte* part) {
  const size_t run = static_cast<size_t>(count) * g.inner_bytes;
  if (run == 0) return;
  for (int64_t o = 0; o < g.outer; ++o) {
    std::memcpy(whole + (o * g.length + begin) * g.inner_bytes, part + o * run, run);
  }
}

}  // namespace nxrt::cpu
