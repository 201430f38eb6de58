// What `nxrt bench` and `nxrt generate` report beside their timings: the
// session's kernel-cache statistics and device-graph counters, and the
// process's peak resident memory, as text lines or as JSON members.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "common/json_writer.hpp"
#include "nxrt/session.hpp"
#include "nxrt/session_report.hpp"

namespace nxrt::cli {

struct RunCounters {
  KernelCacheStats kernel_cache;
  DeviceGraphCounters device_graphs;                      // both slots
  std::array<DeviceGraphCounters, 2> device_graph_slots;  // Primary, Verify
  uint64_t peak_rss_kib = 0;  // the most resident memory the process has held; 0 if unknown
};

// `session`'s counters now, and the process's peak memory so far.
RunCounters ReadRunCounters(const Session& session);

// Three lines, each ending in a newline, and a line per slot when the
// Verify slot ran.
std::string RunCountersText(const RunCounters& counters);

// The members kernel_cache, device_graphs, device_graph_slots (primary and
// verify) and peak_rss_kib of the object `json` is writing.
void WriteRunCounters(JsonWriter& json, const RunCounters& counters);

}  // namespace nxrt::cli
