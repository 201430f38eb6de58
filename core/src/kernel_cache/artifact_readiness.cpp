#include "kernel_cache/artifact_readiness.hpp"

#include <string>

#include "nxrt/support/checked_math.hpp"

namespace nxrt::kernel_cache {

Result<uint64_t> ArtifactReadiness::CheckedNextEpoch() const {
  const uint64_t current = epoch();
  if (auto next = CheckedAdd<uint64_t>(current, 1)) return *next;
  return Internal("artifact readiness epoch " + std::to_string(current) +
                  " is exhausted; no further kernel can be published, so recreate the session");
}

}  // namespace nxrt::kernel_cache
