// Moving runs of slices along one axis between a whole tensor and a packed
// part of it, as bytes: Scan takes and places one slice per iteration,
// SplitToSequence cuts ranges out, ConcatFromSequence puts them back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace nxrt::cpu {

// A tensor seen along `axis`: `outer` blocks, each `length` slices of
// `inner_bytes` bytes.
struct AxisGeometry {
  int64_t outer = 1;
  int64_t length = 1;
  size_t inner_bytes = 0;
};

// `axis` must be in [0, rank); `element_size` in bytes.
AxisGeometry AxisGeometryOf(std::span<const int64_t> dims, int64_t axis, size_t element_size);

// Copies slices [begin, begin + count) of `whole` into `part` (packed: outer
// blocks of count slices).
void GatherAxisRange(const AxisGeometry& g, const std::byte* whole, int64_t begin, int64_t count,
                     std::byte* part);
// Copies `part` into slices [begin, begin + count) of `whole`.
void ScatterAxisRange(const AxisGeometry& g, std::byte* whole, int64_t begin, int64_t count,
                      const std::byte* part);

}  // namespace nxrt::cpu
