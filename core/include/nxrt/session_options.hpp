// SessionOptions: how a Session is built. Execution providers are listed in
// priority order; each node goes to the first one that claims it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nxrt/graph/capture_mode.hpp"

namespace nxrt {

// One execution provider: a plugin short name ("cpu", "mock") or a library
// path, and the key/value options its instance is created with. The same
// plugin may appear twice with different options, as two instances.
struct ExecutionProviderSpec {
  std::string name_or_path;
  std::vector<std::pair<std::string, std::string>> options;
};

struct SessionOptions {
  // Priority order; empty means the "cpu" plugin alone.
  std::vector<ExecutionProviderSpec> providers;

  // Shape variants the kernel cache keeps per node; unset takes the
  // process default (NXRT_KERNEL_CACHE_VARIANTS_PER_NODE, else 4).
  std::optional<size_t> kernel_cache_variants_per_node;

  // Capture classifier mode; unset takes NXRT_CAPTURE_CLASSIFIER (fail-safe
  // by default).
  std::optional<graph::CaptureMode> capture_mode;

  // Record and replay device graphs for runs on a device-graph slot.
  bool device_graphs = true;

  // The KV cache is bound at fixed capacity while decoding, so its capacity
  // axis does not grow and may be captured.
  bool fixed_capacity_kv = false;
};

}  // namespace nxrt
