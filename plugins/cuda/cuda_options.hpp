// The options a CUDA EP instance is created with: which device, how much
// freed memory the stream-ordered pool may keep, and whether device graphs
// are offered. Parsed without touching CUDA, so tests run anywhere.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "nxrt/ep_sdk.hpp"

namespace nxrt::cuda {

struct CudaOptions {
  int device_id = 0;
  // Freed bytes the pool keeps for reuse instead of returning to the driver.
  uint64_t memory_release_threshold = uint64_t{1} << 30;
  bool device_graphs = true;
};

using OptionList = std::span<const std::pair<std::string, std::string>>;

// Throws sdk::Error INVALID_ARGUMENT naming an unknown key or a bad value.
CudaOptions ParseCudaOptions(OptionList options);
CudaOptions ParseCudaOptions(const sdk::Options& options);

}  // namespace nxrt::cuda
