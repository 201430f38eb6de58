// The execution plan of one graph: its nodes in topological order, each with
// the EP it was placed on, the value slots it reads and writes, the copies
// that bring inputs from another EP's memory, and the scratch its dispatch
// reuses run after run (input shapes, ABI values, the kernel pre-binding).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "executor/value_buffer.hpp"
#include "kernel_cache/kernel_cache.hpp"
#include "nxrt/ep_abi.h"
#include "nxrt/graph/ids.hpp"
#include "plugin_host/kernel.hpp"
#include "plugin_host/node_view.hpp"

namespace nxrt::executor {

inline constexpr size_t kNoSlot = SIZE_MAX;

// A copy of a value into the memory of the EP that consumes it.
struct Transfer {
  size_t from_slot = kNoSlot;
  size_t to_slot = kNoSlot;
  bool once = false;  // the source is a constant: copy on the first run only
  // A KV cache the EP keeps in its memory: copy only when the run binds a
  // source other than the one last copied (its address, size or dims).
  bool resident = false;
  bool done = false;
  const void* copied_from = nullptr;
  ValueBuffer staging;  // host bytes between two device memories
};

struct PlannedNode {
  // What a settled dispatch reads, together (Executor::ComputeSettled): the
  // shape generation at which the last dispatch left the values below as a
  // dispatch at the same shapes would make them again (0 when not so; a run
  // resolves shapes first, so the generations it sees start at 1), the
  // kernel cache's erasure count then, and the inputs whose bytes may have
  // moved since.
  uint64_t settled_generation = 0;
  uint64_t settled_erasures = 0;
  uint64_t settled_frees = 0;  // the executor's buffer frees then
  kernel_cache::KernelRef kernel;
  plugin_host::Kernel::ComputeEntry compute;  // the kernel's, kept with the node
  // The ABI values of the node's inputs then outputs, back to back in one
  // array of the executor (neighbouring nodes' values are neighbours too).
  std::span<nxrt_value> inputs;
  std::span<nxrt_value> outputs;
  std::vector<uint32_t> moving_inputs;
  std::vector<size_t> input_slots;  // kNoSlot for an absent input

  kernel_cache::PreBinding binding;
  graph::NodeId id;
  size_t provider = 0;
  std::shared_ptr<const plugin_host::NodeView> view;
  int64_t opset = 0;
  bool capture_eligible = false;
  std::vector<size_t> output_slots;  // kNoSlot for an absent output
  // Per output: the input whose buffer it is written into, in place, when the
  // run binds that input at the output's planned dims and dtype (a fixed-
  // capacity KV cache); kNoSlot for an output with a buffer of its own.
  std::vector<size_t> in_place_input;
  // A view op (Identity, Reshape, Flatten, Squeeze, Unsqueeze) whose output
  // takes its input's bytes under the output's own dims (PlanViews).
  bool views_input = false;
  std::vector<Transfer> transfers;  // run before the node

  // Reused by every dispatch of the node.
  std::vector<kernel_cache::InputShape> input_shapes;
  std::vector<bool> preallocated;  // per output, this dispatch
};

}  // namespace nxrt::executor
