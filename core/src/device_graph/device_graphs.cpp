#include "device_graph/device_graphs.hpp"

#include <algorithm>
#include <cstdint>

namespace nxrt::device_graph {

Status DeviceGraphs::ResetCapture(Segment& segment, SlotCapture& slot) {
  if (slot.token == 0) return Status::Ok();
  const nxrt_graph_token token = slot.token;
  // Forgotten first: a failed reset must not leave a token that might be
  // replayed against freed memory.
  // The recorded bindings stay, so the next run can tell why it runs eagerly.
  slot.token = 0;
  slot.warm_valid = false;
  Bump(slots_[static_cast<size_t>(&slot - segment.slots.data())].resets);
  return provider(segment.provider).Reset(token);
}

Status DeviceGraphs::ResetAllSlots() {
  Status first;
  for (Segment& segment : segments_) {
    for (SlotCapture& slot : segment.slots) {
      Status reset = ResetCapture(segment, slot);
      if (!reset.ok() && first.ok()) first = reset;
    }
  }
  return first;
}

Status DeviceGraphs::ResetCapturesOf(std::span<const void* const> kernels) {
  Status first;
  const auto evicted = [&](uintptr_t address) {
    return std::ranges::any_of(kernels, [&](const void* kernel) {
      return reinterpret_cast<uintptr_t>(kernel) == address;
    });
  };
  for (Segment& segment : segments_) {
    for (SlotCapture& slot : segment.slots) {
      if (slot.token == 0 || std::ranges::none_of(slot.captured.addresses, evicted)) continue;
      Status reset = ResetCapture(segment, slot);
      if (!reset.ok() && first.ok()) first = reset;
    }
  }
  return first;
}

void DeviceGraphs::BeforeBufferFree(const void* data, size_t bytes) {
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const auto inside = [&](uintptr_t address) {
    return address >= begin && address - begin < bytes;
  };
  for (Segment& segment : segments_) {
    for (SlotCapture& slot : segment.slots) {
      if (slot.token == 0 || std::ranges::none_of(slot.captured.addresses, inside)) continue;
      Status reset = ResetCapture(segment, slot);
      if (!reset.ok() && deferred_error_.ok()) deferred_error_ = reset;
    }
  }
}

DeviceGraphCounters DeviceGraphs::counters(nxrt_graph_slot slot) const {
  const SlotCounters& counts = slots_[slot];
  DeviceGraphCounters c;
  c.captures = counts.captures.load(std::memory_order_relaxed);
  c.replays = counts.replays.load(std::memory_order_relaxed);
  c.resets = counts.resets.load(std::memory_order_relaxed);
  for (size_t i = 0; i < counts.fallbacks.size(); ++i) {
    c.eager_fallbacks[i] = counts.fallbacks[i].load(std::memory_order_relaxed);
  }
  return c;
}

DeviceGraphCounters DeviceGraphs::counters() const {
  DeviceGraphCounters sum = counters(NXRT_GRAPH_SLOT_PRIMARY);
  const DeviceGraphCounters verify = counters(NXRT_GRAPH_SLOT_VERIFY);
  sum.captures += verify.captures;
  sum.replays += verify.replays;
  sum.resets += verify.resets;
  for (size_t i = 0; i < sum.eager_fallbacks.size(); ++i) {
    sum.eager_fallbacks[i] += verify.eager_fallbacks[i];
  }
  return sum;
}

}  // namespace nxrt::device_graph
