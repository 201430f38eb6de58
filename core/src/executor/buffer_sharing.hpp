// Which values of a graph may share one buffer: those whose lifetimes, in
// the order the plan runs its nodes, never overlap. Each value still has a
// fixed buffer from run to run (so runs allocate nothing once the buffers
// have grown, and captured device graphs keep their addresses), but a
// buffer serves several values in turn, as ONNX Runtime's memory planner
// lets them.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace nxrt::executor {

// A value's life in plan positions: made by the node at `first`, read last
// by the node at `last`, both included.
struct Lifetime {
  size_t first = 0;
  size_t last = 0;
};

// The buffer of each value, an index below `buffer_count`. Values with a
// lifetime share a buffer only with values whose lifetimes do not overlap
// theirs; a value without one (nullopt) has a buffer of its own.
struct BufferAssignment {
  std::vector<size_t> buffer_of_value;
  size_t buffer_count = 0;
};
BufferAssignment AssignBuffers(std::span<const std::optional<Lifetime>> lifetimes);

}  // namespace nxrt::executor
