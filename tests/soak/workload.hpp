// What every soak workload shares: the settings it runs under, the probe it
// calls after each step (which samples resources and, to show the soak
// catches one, can leak on purpose), and the result it hands back for the
// table: its samples, the final kernel-cache and device-graph counters, and
// every bound it found broken.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "nxrt/session.hpp"
#include "resource_samples.hpp"

namespace nxrt::soak {

struct SoakSettings {
  std::filesystem::path models;  // the folder of the generated models
  int threads = 1;
  size_t variants_per_node = 4;
  uint64_t seed = 1;
  size_t leak_bytes_per_step = 0;  // leaked and kept after every step; 0 in a real soak
};

// The session options every workload's sessions take.
SessionOptions SoakSessionOptions(const SoakSettings& settings);

class StepProbe {
 public:
  // Room for every sample is taken now: the samples' own growth would show
  // as the process's.
  StepProbe(int64_t steps, int64_t sample_every, size_t leak_bytes_per_step);
  // After each step: leaks if asked, and samples every `sample_every` steps
  // (and at the first, so the table has a start).
  void StepDone(int64_t steps_done);
  std::vector<ResourceSample> TakeSamples() { return std::move(samples_); }

 private:
  int64_t sample_every_;
  size_t leak_bytes_per_step_;
  std::vector<std::unique_ptr<char[]>> leaked_;
  std::vector<ResourceSample> samples_;
};

struct WorkloadResult {
  std::string name;
  int64_t steps = 0;
  double seconds = 0;
  std::vector<ResourceSample> samples;
  std::vector<std::string> counters;       // kernel cache, device graphs..., one line each
  std::vector<std::string> broken_bounds;  // one line each
};

// Checks a live session against its bounds: the kernel cache holds at most
// `variants_per_node` variants per kernel node, and each device-graph slot
// holds at most one live capture per segment. Appends what is broken.
void CheckSessionBounds(const Session& session, size_t variants_per_node, const std::string& what,
                        std::vector<std::string>& broken);

// The session's kernel-cache and device-graph counters, one line each.
std::vector<std::string> DescribeCounters(const Session& session, size_t variants_per_node);

}  // namespace nxrt::soak
