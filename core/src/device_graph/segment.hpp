// A device-graph segment: a maximal run of consecutive plan nodes that the
// capture classifier found eligible, all on one EP that captures device
// graphs. Each slot (Primary, Verify) keeps its own capture of the segment.
//
// A capture is only valid for the exact tensors it recorded, so each slot
// remembers what the capture bound (shapes, buffer addresses, allocation
// epochs, kernels) and what the last eager run bound: a capture is taken once
// a warm-up run saw the same bindings, and a replay first checks that nothing
// moved.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "nxrt/ep_abi.h"

namespace nxrt::device_graph {

// What the nodes of a segment are bound to, flattened for comparison without
// allocation: one list per kind of mismatch, so a fallback can say which.
struct SegmentBindings {
  std::vector<int64_t> shapes;
  std::vector<uintptr_t> addresses;  // buffers and kernels
  std::vector<uint64_t> epochs;

  void Clear() {
    shapes.clear();
    addresses.clear();
    epochs.clear();
  }
  // Copies into the existing capacity.
  void AssignFrom(const SegmentBindings& other) {
    shapes.assign(other.shapes.begin(), other.shapes.end());
    addresses.assign(other.addresses.begin(), other.addresses.end());
    epochs.assign(other.epochs.begin(), other.epochs.end());
  }
};

struct SlotCapture {
  nxrt_graph_token token = 0;  // 0: nothing captured
  // What the capture bound; kept after a reset until a run has compared
  // against it, so that run's fallback names what changed.
  SegmentBindings captured;
  bool captured_valid = false;
  SegmentBindings warm;  // the last eager run's bindings
  bool warm_valid = false;
  // What the capture bound from outside the segment, and the executor's
  // shape generation then: while both hold, and the capture was not reset,
  // nothing inside the segment can have moved, so a replay needs no
  // per-node preparation.
  SegmentBindings external;
  uint64_t shape_generation = 0;
};

struct Segment {
  size_t begin = 0;  // plan node indices [begin, end)
  size_t end = 0;
  size_t provider = 0;
  // Fixed by the plan: the non-constant slots the nodes read from outside the
  // segment, each once (constants never move, so a replay need not check
  // them), the slots the nodes write, and the nodes that copy an input from
  // another EP's memory first (a replay must refresh those copies too).
  std::vector<size_t> external_slots;
  std::vector<size_t> output_slots;
  std::vector<size_t> transfer_nodes;
  std::array<SlotCapture, 2> slots;  // indexed by nxrt_graph_slot
  // The slot whose capture the nodes' prepared values match; -1 after any
  // other preparation.
  int prepared_for = -1;
};

}  // namespace nxrt::device_graph
