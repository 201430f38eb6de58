// The device graphs of one session: its segments, their captures in each
// slot, and the counters a session reports.
//
// Resetting is central here because three different events must drop
// captures before memory goes away: the kernel cache evicting a kernel, the
// executor reallocating or freeing a bound buffer, and the session closing.
// The first two reset only the captures whose recorded bindings name the
// kernel or lie in the buffer, so the captures of a decode step's stable
// segments live while the eager nodes around them see a longer cache every
// step; closing resets every live capture (ResetAllSlots).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "device_graph/segment.hpp"
#include "executor/value_buffer.hpp"
#include "kernel_cache/device_graph_resetter.hpp"
#include "nxrt/session_report.hpp"
#include "partitioner/partition.hpp"

namespace nxrt::device_graph {

class DeviceGraphs : public kernel_cache::DeviceGraphResetter, public executor::BufferFreeListener {
 public:
  explicit DeviceGraphs(std::vector<partitioner::RankedProvider> providers)
      : providers_(std::move(providers)) {}

  std::vector<Segment>& segments() { return segments_; }

  // Resets every live capture; keeps going past a failing reset and returns
  // the first error. Counts each reset.
  Status ResetAllSlots();
  // Resets the captures whose recorded bindings name one of `kernels`.
  Status ResetCapturesOf(std::span<const void* const> kernels) override;
  // Resets the captures that bound memory in the buffer being freed, and
  // only those: a decode step whose growing values outgrow their buffers
  // keeps the captures of the segments that never saw them. A failing reset
  // here cannot stop the free; it is kept for the run to report
  // (TakeDeferredError).
  void BeforeBufferFree(const void* data, size_t bytes) override;
  Status TakeDeferredError() { return std::exchange(deferred_error_, Status::Ok()); }
  // Resets one capture and forgets its token.
  Status ResetCapture(Segment& segment, SlotCapture& slot);

  void CountCapture(nxrt_graph_slot slot) { Bump(slots_[slot].captures); }
  void CountReplay(nxrt_graph_slot slot) { Bump(slots_[slot].replays); }
  void CountFallback(nxrt_graph_slot slot, EagerFallbackReason reason) {
    Bump(slots_[slot].fallbacks[static_cast<size_t>(reason)]);
  }
  // Both slots' counts together, and one slot's.
  DeviceGraphCounters counters() const;
  DeviceGraphCounters counters(nxrt_graph_slot slot) const;

  plugin_host::ExecutionProvider& provider(size_t index) { return *providers_[index].provider; }

 private:
  std::vector<partitioner::RankedProvider> providers_;
  std::vector<Segment> segments_;
  Status deferred_error_;
  struct SlotCounters {
    std::atomic<uint64_t> captures{0};
    std::atomic<uint64_t> replays{0};
    std::atomic<uint64_t> resets{0};
    std::array<std::atomic<uint64_t>, static_cast<size_t>(EagerFallbackReason::kCount)> fallbacks{};
  };
  static void Bump(std::atomic<uint64_t>& count) { count.fetch_add(1, std::memory_order_relaxed); }
  std::array<SlotCounters, 2> slots_;  // indexed by nxrt_graph_slot
};

}  // namespace nxrt::device_graph
