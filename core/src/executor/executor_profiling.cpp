// The profiled form of one executor step (run_profile.hpp): the step runs as
// it would unprofiled, between two clock reads, and its event is built after
// the second, so describing it costs the run's time but not the event's.
#include <chrono>
#include <string>

#include "executor/executor.hpp"

namespace nxrt {

const char* ProfileEventKindName(ProfileEvent::Kind kind) {
  switch (kind) {
    case ProfileEvent::Kind::kNode:
      return "node";
    case ProfileEvent::Kind::kReplay:
      return "replay";
    case ProfileEvent::Kind::kCapture:
      return "capture";
    case ProfileEvent::Kind::kEagerSegment:
      return "eager segment";
  }
  return "unknown";
}

}  // namespace nxrt

namespace nxrt::executor {
namespace {

std::string InputShapes(const PlannedNode& node) {
  std::string out;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!out.empty()) out += ' ';
    const nxrt_value& value = node.inputs[i];
    if (node.input_slots[i] == kNoSlot || value.kind == NXRT_VALUE_NONE) {
      out += '-';
    } else if (value.kind == NXRT_VALUE_SEQUENCE) {
      out += "seq";
    } else {
      out += '[';
      for (size_t d = 0; d < value.tensor.rank; ++d) {
        if (d > 0) out += ',';
        out += std::to_string(value.tensor.dims[d]);
      }
      out += ']';
    }
  }
  return out;
}

ProfileEvent::Kind SegmentKind(const DeviceGraphCounters& before,
                               const DeviceGraphCounters& after) {
  if (after.captures != before.captures) return ProfileEvent::Kind::kCapture;
  if (after.replays != before.replays) return ProfileEvent::Kind::kReplay;
  return ProfileEvent::Kind::kEagerSegment;
}

}  // namespace

Status Executor::ProfiledStep(size_t index, device_graph::Segment* segment,
                              std::optional<nxrt_graph_slot> slot) {
  DeviceGraphCounters before;
  if (segment != nullptr) before = shared_.device_graphs->counters();
  const auto start = std::chrono::steady_clock::now();
  Status ran = segment != nullptr ? RunSegment(*segment, *slot) : RunNode(nodes_[index]);
  const auto end = std::chrono::steady_clock::now();
  if (!ran.ok()) return ran;

  const PlannedNode& node = nodes_[index];
  const graph::Node& graph_node = graph_.node(node.id);
  ProfileEvent event;
  event.graph = graph_.name;
  for (const Executor* up = parent_; up != nullptr; up = up->parent_) ++event.depth;
  event.node = graph_node.name.empty() ? "#" + std::to_string(node.id.index) : graph_node.name;
  event.op_type = graph_node.domain.empty() ? graph_node.op_type
                                            : graph_node.domain + "::" + graph_node.op_type;
  event.provider = shared_.providers[node.provider].label;
  if (segment != nullptr) {
    event.kind = SegmentKind(before, shared_.device_graphs->counters());
    event.nodes = segment->end - segment->begin;
  } else {
    event.input_shapes = InputShapes(node);
  }
  event.start = start;
  event.duration = end - start;
  shared_.profile->events.push_back(std::move(event));
  return ran;
}

}  // namespace nxrt::executor
