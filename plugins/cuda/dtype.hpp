// Element types as the CUDA EP sees them: which types its kernels move and
// which each kernel family computes (sizes and names are the SDK's). Shared
// by the claim rules and the kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "nxrt/ep_abi.h"
#include "nxrt/ep_dtype.hpp"

namespace nxrt::cuda {

using sdk::DtypeName;
using sdk::ElementSize;
// Whether the device kernels move elements of `dtype`: whole words of 1, 2,
// 4 or 8 bytes (not strings, complex128 or the packed sub-byte types).
bool IsDeviceWord(nxrt_dtype dtype);
// float32, float16 and bfloat16: the types the arithmetic kernels compute.
bool IsComputeFloat(nxrt_dtype dtype);
// Types Cast converts between.
bool IsCastable(nxrt_dtype dtype);
int64_t ElementCount(std::span<const int64_t> dims);

}  // namespace nxrt::cuda
