// The largest head size and key count the CUDA attention kernels
// (GroupQueryAttention and Attention) take: one thread per head element when
// appending KV rows, one shared-memory score per key. The claim rules
// decline beyond them where the shapes are static.
#pragma once

#include <cstdint>

namespace nxrt::cuda {

constexpr int64_t kAttentionMaxDepth = 256;
constexpr int64_t kAttentionMaxKeys = 8192;

}  // namespace nxrt::cuda
