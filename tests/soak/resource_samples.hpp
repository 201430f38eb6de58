// What the soak watches grow: the process's resident memory, its open file
// descriptors and the bytes malloc has handed out, sampled between steps of
// a workload, and the least-squares slope of each over the samples after
// warm-up.
//
// RSS is the target (what an operator sees), but it moves in whole pages and
// with the allocator's trimming, so a short run cannot resolve a slope of a
// few bytes per step from it; malloc's in-use bytes can, to the byte.
#pragma once

#include <cstdint>
#include <span>

namespace nxrt::soak {

struct ResourceSample {
  int64_t step = 0;  // steps done when sampled
  int64_t rss_kib = 0;
  int64_t open_fds = 0;
  int64_t heap_bytes = 0;  // malloc's bytes in use, every arena and mmapped chunk
};

ResourceSample SampleResources(int64_t step);

// The slope of one quantity per 1,000 steps, fitted over the samples taken
// at or after `from_step`; 0 with fewer than two such samples.
double SlopePerThousandSteps(std::span<const ResourceSample> samples, int64_t from_step,
                             int64_t ResourceSample::*quantity);

// Whether a mapping of a file whose name contains `name` is in the process's
// address space (a plugin that dlclose really unloaded is not).
bool IsMapped(const char* name);

}  // namespace nxrt::soak
