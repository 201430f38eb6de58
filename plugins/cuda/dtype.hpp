// Element types as the CUDA EP sees them: sizes, names, and which types each
// kernel family computes. Shared by the claim rules and the kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "nxrt/ep_abi.h"

namespace nxrt::cuda {

// Bytes per element; 0 for strings, sub-byte and undefined types.
size_t ElementSize(nxrt_dtype dtype);
std::string DtypeName(nxrt_dtype dtype);
// float32, float16 and bfloat16: the types the arithmetic kernels compute.
bool IsComputeFloat(nxrt_dtype dtype);
// Types Cast converts between.
bool IsCastable(nxrt_dtype dtype);
int64_t ElementCount(std::span<const int64_t> dims);

}  // namespace nxrt::cuda
