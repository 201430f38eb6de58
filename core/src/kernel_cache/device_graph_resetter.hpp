// How the kernel cache asks the executor to drop its captured device graphs.
//
// A captured graph may have baked in the address of a workspace owned by a
// kernel; evicting that kernel frees the workspace, and replaying the graph
// afterwards would read freed device memory. So before every eviction the
// cache has the executor reset, in both slots (Primary and Verify), every
// capture that ran one of the kernels it is about to evict.
#pragma once

#include <span>

#include "nxrt/support/status.hpp"

namespace nxrt::kernel_cache {

class DeviceGraphResetter {
 public:
  virtual ~DeviceGraphResetter() = default;
  // Resets, in the Primary and Verify slots, the captures that ran any of
  // `kernels`; an empty slot is a no-op. Called without any cache lock
  // held; it must not call the cache's GetOrCreate.
  virtual Status ResetCapturesOf(std::span<const void* const> kernels) = 0;
};

}  // namespace nxrt::kernel_cache
