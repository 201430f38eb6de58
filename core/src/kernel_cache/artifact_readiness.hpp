// The artifact-readiness epoch: a number that moves forward each time the
// kernel cache publishes a new kernel, and only then.
//
// Whatever caches a view of which kernels exist (pre-bindings, binding plans,
// captured device graphs) records the epoch it saw and revalidates once the
// epoch has moved, so building, binding and dispatch never disagree about
// which artifacts are ready. Moving it is reserved to the cache's single
// publication step; everyone else only reads it.
#pragma once

#include <atomic>
#include <cstdint>

#include "nxrt/support/status.hpp"

namespace nxrt::kernel_cache {

class ArtifactReadiness {
 public:
  // `epoch` continues from an earlier cache this one replaces, so an observer
  // never sees the epoch go back.
  explicit ArtifactReadiness(uint64_t epoch = 0) : epoch_(epoch) {}
  ArtifactReadiness(const ArtifactReadiness&) = delete;
  ArtifactReadiness& operator=(const ArtifactReadiness&) = delete;

  uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }
  // The epoch the next publication will move to; an error once exhausted,
  // because wrapping would let a stale view pass as current.
  Result<uint64_t> CheckedNextEpoch() const;

 private:
  friend class KernelCache;
  // `next` must come from CheckedNextEpoch with no publication in between.
  void AdvanceTo(uint64_t next) { epoch_.store(next, std::memory_order_release); }

  std::atomic<uint64_t> epoch_;
};

}  // namespace nxrt::kernel_cache
