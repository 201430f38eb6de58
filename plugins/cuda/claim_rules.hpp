// Which nodes the CUDA EP claims, decided from the op, its attributes and the
// inferred input types alone, so claims need no device and are tested on
// machines without one. Everything else is declined with the reason, and the
// next EP (normally the CPU EP) takes it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "nxrt/ep_sdk.hpp"

namespace nxrt::cuda {

sdk::ClaimResult ClaimOnCuda(const sdk::Node& node, int64_t opset,
                             std::span<const nxrt_value_info> inputs,
                             std::span<const nxrt_layout> layouts);

// The op types (default domain) some claim rule may accept.
std::vector<std::string_view> CudaOpTypes();

}  // namespace nxrt::cuda
