#include "common/run_counters.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>

namespace nxrt::cli {
namespace {

unsigned long long Count(uint64_t value) {
  return static_cast<unsigned long long>(value);
}

// VmHWM, the high-water mark of this process's own memory: getrusage's
// maxrss also counts what the parent held when it forked this process.
uint64_t PeakRssKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

}  // namespace

RunCounters ReadRunCounters(const Session& session) {
  return {session.kernel_cache_stats(),
          session.device_graph_counters(),
          {session.device_graph_counters(DeviceGraphSlot::kPrimary),
           session.device_graph_counters(DeviceGraphSlot::kVerify)},
          PeakRssKib()};
}

std::string RunCountersText(const RunCounters& counters) {
  const KernelCacheStats& cache = counters.kernel_cache;
  const DeviceGraphCounters& graphs = counters.device_graphs;
  char line[256];
  std::snprintf(line, sizeof line,
                "kernel cache: %zu entries (%zu serving any shape), %llu hits, %llu misses, "
                "%llu pre-bound hits, %llu evictions\n",
                cache.entries, cache.shape_general_entries, Count(cache.hits), Count(cache.misses),
                Count(cache.prebound_hits), Count(cache.evictions));
  std::string text = line;
  std::snprintf(line, sizeof line, "device graphs: %llu captures, %llu replays, %llu resets",
                Count(graphs.captures), Count(graphs.replays), Count(graphs.resets));
  text += line;
  for (size_t r = 0; r < graphs.eager_fallbacks.size(); ++r) {
    if (graphs.eager_fallbacks[r] == 0) continue;
    std::snprintf(line, sizeof line, ", %llu eager (%s)", Count(graphs.eager_fallbacks[r]),
                  EagerFallbackReasonName(static_cast<EagerFallbackReason>(r)));
    text += line;
  }
  const DeviceGraphCounters& verify = counters.device_graph_slots[1];
  if (verify.captures + verify.replays > 0) {
    for (const auto& [name, slot] :
         {std::pair{"primary", counters.device_graph_slots[0]}, std::pair{"verify", verify}}) {
      std::snprintf(line, sizeof line, "\n  %s slot: %llu captures, %llu replays, %llu resets",
                    name, Count(slot.captures), Count(slot.replays), Count(slot.resets));
      text += line;
    }
  }
  std::snprintf(line, sizeof line, "\npeak memory: %.1f MiB resident\n",
                static_cast<double>(counters.peak_rss_kib) / 1024.0);
  return text + line;
}

void WriteRunCounters(JsonWriter& json, const RunCounters& counters) {
  const KernelCacheStats& cache = counters.kernel_cache;
  json.Key("kernel_cache").BeginObject();
  json.Key("entries").Unsigned(cache.entries);
  json.Key("shape_general_entries").Unsigned(cache.shape_general_entries);
  json.Key("hits").Unsigned(cache.hits);
  json.Key("misses").Unsigned(cache.misses);
  json.Key("prebound_hits").Unsigned(cache.prebound_hits);
  json.Key("evictions").Unsigned(cache.evictions);
  json.EndObject();
  const DeviceGraphCounters& graphs = counters.device_graphs;
  json.Key("device_graphs").BeginObject();
  json.Key("captures").Unsigned(graphs.captures);
  json.Key("replays").Unsigned(graphs.replays);
  json.Key("resets").Unsigned(graphs.resets);
  json.Key("eager_fallbacks").BeginObject();
  for (size_t r = 0; r < graphs.eager_fallbacks.size(); ++r) {
    json.Key(EagerFallbackReasonName(static_cast<EagerFallbackReason>(r)))
        .Unsigned(graphs.eager_fallbacks[r]);
  }
  json.EndObject().EndObject();
  json.Key("device_graph_slots").BeginObject();
  for (const auto& [name, slot] : {std::pair{"primary", counters.device_graph_slots[0]},
                                   std::pair{"verify", counters.device_graph_slots[1]}}) {
    json.Key(name).BeginObject();
    json.Key("captures").Unsigned(slot.captures);
    json.Key("replays").Unsigned(slot.replays);
    json.Key("resets").Unsigned(slot.resets);
    json.EndObject();
  }
  json.EndObject();
  json.Key("peak_rss_kib").Unsigned(counters.peak_rss_kib);
}

}  // namespace nxrt::cli
