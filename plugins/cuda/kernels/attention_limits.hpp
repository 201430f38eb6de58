// The largest head size and KV capacity the CUDA GroupQueryAttention kernel
// takes: one thread per head element, one shared-memory score per key. The
// claim rules decline beyond them where the shapes are static.
#pragma once

#include <cstdint>

namespace nxrt::cuda {

constexpr int64_t kGqaMaxDepth = 256;
constexpr int64_t kGqaMaxCapacity = 8192;

}  // namespace nxrt::cuda
