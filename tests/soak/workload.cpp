#include "workload.hpp"

#include <cstring>
#include <utility>

namespace nxrt::soak {
namespace {

struct SessionBounds {
  size_t kernel_nodes = 0;      // nodes with a kernel of their own (not fused into another)
  size_t capture_eligible = 0;  // of those, the ones a segment may hold
};

SessionBounds BoundsOf(const Session& session) {
  SessionBounds bounds;
  for (const NodePlacement& placement : session.placements()) {
    if (!placement.fused_into.empty()) continue;
    ++bounds.kernel_nodes;
    if (placement.capture_eligible) ++bounds.capture_eligible;
  }
  return bounds;
}

std::string SlotLine(const char* name, const DeviceGraphCounters& c, size_t segment_bound) {
  std::string fallbacks;
  for (size_t i = 0; i < c.eager_fallbacks.size(); ++i) {
    if (c.eager_fallbacks[i] == 0) continue;
    fallbacks += (fallbacks.empty() ? "" : ", ") + std::to_string(c.eager_fallbacks[i]) + " " +
                 EagerFallbackReasonName(static_cast<EagerFallbackReason>(i));
  }
  return std::string(name) + ": " + std::to_string(c.captures) + " captures, " +
         std::to_string(c.replays) + " replays, " + std::to_string(c.resets) + " resets, " +
         std::to_string(c.captures - c.resets) + " live (bound " + std::to_string(segment_bound) +
         "); eager fallbacks: " + (fallbacks.empty() ? "none" : fallbacks);
}

}  // namespace

SessionOptions SoakSessionOptions(const SoakSettings& settings) {
  SessionOptions options;
  options.providers.push_back({"cpu", {{"threads", std::to_string(settings.threads)}}});
  options.kernel_cache_variants_per_node = settings.variants_per_node;
  return options;
}

StepProbe::StepProbe(int64_t steps, int64_t sample_every, size_t leak_bytes_per_step)
    : sample_every_(sample_every < 1 ? 1 : sample_every),
      leak_bytes_per_step_(leak_bytes_per_step) {
  samples_.reserve(static_cast<size_t>(steps / sample_every_ + 2));
}

void StepProbe::StepDone(int64_t steps_done) {
  if (leak_bytes_per_step_ > 0) {
    // Written, so the pages are resident as a real leak's would be.
    leaked_.push_back(std::make_unique<char[]>(leak_bytes_per_step_));
    std::memset(leaked_.back().get(), 1, leak_bytes_per_step_);
  }
  if (steps_done == 1 || steps_done % sample_every_ == 0) {
    samples_.push_back(SampleResources(steps_done));
  }
}

void CheckSessionBounds(const Session& session, size_t variants_per_node, const std::string& what,
                        std::vector<std::string>& broken) {
  const SessionBounds bounds = BoundsOf(session);
  const KernelCacheStats cache = session.kernel_cache_stats();
  if (cache.entries > variants_per_node * bounds.kernel_nodes) {
    broken.push_back(what + ": the kernel cache holds " + std::to_string(cache.entries) +
                     " kernels, over " + std::to_string(variants_per_node) + " variants x " +
                     std::to_string(bounds.kernel_nodes) + " kernel nodes");
  }
  const std::pair<DeviceGraphSlot, const char*> slots[] = {{DeviceGraphSlot::kPrimary, "Primary"},
                                                           {DeviceGraphSlot::kVerify, "Verify"}};
  for (const auto& [slot, name] : slots) {
    const DeviceGraphCounters c = session.device_graph_counters(slot);
    // Each segment has at least one capture-eligible node and holds at most
    // one capture per slot.
    if (c.resets > c.captures || c.captures - c.resets > bounds.capture_eligible) {
      broken.push_back(what + ": the " + name + " slot holds " + std::to_string(c.captures) +
                       " captures less " + std::to_string(c.resets) + " resets, over one per " +
                       "segment (at most " + std::to_string(bounds.capture_eligible) + ")");
    }
  }
}

std::vector<std::string> DescribeCounters(const Session& session, size_t variants_per_node) {
  const KernelCacheStats cache = session.kernel_cache_stats();
  const SessionBounds bounds = BoundsOf(session);
  return {
      "kernel cache: " + std::to_string(cache.entries) + " entries (" +
          std::to_string(cache.shape_general_entries) + " serving any shape; bound " +
          std::to_string(variants_per_node) + " x " + std::to_string(bounds.kernel_nodes) +
          " kernel nodes), " + std::to_string(cache.hits) + " hits, " +
          std::to_string(cache.misses) + " misses, " + std::to_string(cache.prebound_hits) +
          " pre-bound hits, " + std::to_string(cache.evictions) + " evictions",
      "device graphs " + SlotLine("Primary",
                                  session.device_graph_counters(DeviceGraphSlot::kPrimary),
                                  bounds.capture_eligible),
      "device graphs " + SlotLine("Verify", session.device_graph_counters(DeviceGraphSlot::kVerify),
                                  bounds.capture_eligible),
  };
}

}  // namespace nxrt::soak
