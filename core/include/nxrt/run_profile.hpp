// RunProfile: where a run's time went, one event per step it dispatched,
// filled when RunOptions::profile points at one.
//
// A node the executor dispatches adds one event, timed around its whole
// dispatch: the host's preparation of the node (shapes, buffers, kernel
// lookup) and the kernel's compute. A captured segment adds one event for
// all its nodes, as a replay has no per-node times; the event says whether
// the segment replayed, was captured (then replayed), or ran eagerly while
// its capture warmed up. The nodes of an If, Loop or Scan body add events of
// their own, which lie inside their parent node's event. Times are the
// host's: for an EP whose kernels run asynchronously (CUDA queues them on a
// stream), an event times the queuing, and the device's work shows up in
// whichever later step waits for it.
//
// Turning profiling on costs two clock reads and one event per step; with
// it off a run pays one pointer test per node.
#pragma once

#include "nxrt/support/export.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nxrt {

struct ProfileEvent {
  enum class Kind : uint8_t {
    kNode,          // one node dispatched
    kReplay,        // a captured segment replayed
    kCapture,       // a segment captured, then replayed
    kEagerSegment,  // a segment's nodes ran one by one, its capture not ready
  };
  Kind kind = Kind::kNode;
  std::string graph;     // the model's main graph, or the body's name
  uint32_t depth = 0;    // 0 in the main graph, 1 in a body of it, and so on
  std::string node;      // the node's name ("#7" when unnamed); a segment's first node
  std::string op_type;   // with "domain::" outside the default domain; a segment's first op
  std::string provider;  // the EP that ran it, as partitioned ("cpu#1")
  // The node's input dims, "[1,256] [256,768]", "-" for an absent input
  // and "seq" for a sequence; empty for a segment.
  std::string input_shapes;
  size_t nodes = 1;  // the plan nodes the event covers
  std::chrono::steady_clock::time_point start;
  std::chrono::nanoseconds duration{0};
};

// Collects the events of the runs given it, in the order the events ended
// (a body's nodes before the node that ran the body). Runs append: clear
// `events` between runs to keep one run's.
struct RunProfile {
  std::vector<ProfileEvent> events;
};

// The name of a kind, as traces print it: "node", "replay", "capture",
// "eager segment".
NXRT_API const char* ProfileEventKindName(ProfileEvent::Kind kind);

}  // namespace nxrt
