// How many shape variants of one node the kernel cache keeps.
//
// Each variant may own device workspaces, so an unbounded cache turns "every
// request has a new prompt length" into memory that grows without limit. A
// per-node bound evicts only where shapes really vary: a graph keeps its hot
// prefill and decode variants. The bound is small on purpose, since raising
// it raises the memory floor under every long request.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace nxrt::kernel_cache {

inline constexpr size_t kDefaultKernelVariantsPerNode = 4;
inline constexpr const char* kKernelVariantsPerNodeEnv = "NXRT_KERNEL_CACHE_VARIANTS_PER_NODE";

// A positive integer (surrounding spaces allowed), or nullopt for anything
// else.
std::optional<size_t> ParseKernelVariantsPerNode(std::string_view text);

// The bound sessions use by default: NXRT_KERNEL_CACHE_VARIANTS_PER_NODE when
// it holds a positive integer, else 4. Read once per process; a bad value is
// logged and ignored.
size_t KernelCacheVariantsPerNode();

}  // namespace nxrt::kernel_cache
