// Numpy broadcasting for elementwise kernels. A plan holds the output dims and
// each input's strides aligned to them (0 along broadcast axes), with
// adjacent axes merged wherever every input steps through them uniformly, so
// the innermost loop is as long as possible and the common cases (same
// shapes, a scalar operand, a per-channel operand) run as flat loops.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tensor.hpp"

namespace nxrt::cpu {

// The broadcast of `shapes`; throws INVALID_ARGUMENT naming `what` when they
// do not broadcast.
Dims BroadcastDims(std::span<const Dims> shapes, const std::string& what);

template <size_t N>
struct BroadcastPlan {
  int64_t count = 0;  // output elements
  // Each input's innermost stride and whether loop_dims has one axis, kept
  // first and inline: a kernel over a few elements then reads one line of
  // the plan and no vector's storage.
  std::array<int64_t, N> inner_strides{};
  bool single_row = false;
  Dims out_dims;                // the broadcast shape (not merged)
  Dims loop_dims;               // merged axes; the last is the inner loop
  std::array<Dims, N> strides;  // per input, per merged axis
};

template <size_t N>
BroadcastPlan<N> MakeBroadcastPlan(const std::array<Dims, N>& shapes, const std::string& what);

// Calls row(offsets, out_offset, length) for every innermost row of the
// plan; offsets[k] is input k's element offset at the row start, and input k
// steps by plan.strides[k].back() along the row.
template <size_t N, typename Row>
void ForEachRow(const BroadcastPlan<N>& plan, Row&& row) {
  if (plan.count == 0) return;
  const size_t rank = plan.loop_dims.size();
  const int64_t inner = plan.loop_dims[rank - 1];
  std::array<int64_t, N> offsets{};
  if (rank == 1) {
    row(offsets, int64_t{0}, inner);
    return;
  }
  // Outer-axis counters; on the stack for the ranks models use, so a
  // capture-safe kernel's compute allocates nothing.
  std::array<int64_t, 16> small_index{};
  std::vector<int64_t> large_index(rank - 1 > small_index.size() ? rank - 1 : 0, 0);
  int64_t* index = large_index.empty() ? small_index.data() : large_index.data();
  for (int64_t out = 0; out < plan.count; out += inner) {
    row(offsets, out, inner);
    for (size_t axis = rank - 1; axis-- > 0;) {
      ++index[axis];
      for (size_t k = 0; k < N; ++k) offsets[k] += plan.strides[k][axis];
      if (index[axis] < plan.loop_dims[axis]) break;
      for (size_t k = 0; k < N; ++k) offsets[k] -= plan.strides[k][axis] * index[axis];
      index[axis] = 0;
    }
  }
}

}  // namespace nxrt::cpu
