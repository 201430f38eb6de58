// Storage for packed constant weights on transparent huge pages. A decode
// step streams every weight once; on 4 KiB pages that costs a TLB miss per
// page and stops the hardware prefetcher at each page boundary, which makes
// the single-row products of a decoder about a quarter slower.
#pragma once

#include <cstddef>
#include <memory>

namespace nxrt::cpu {

// `bytes` bytes, 64-byte aligned, carved from a shared 2 MiB-aligned chunk
// advised for huge pages. The chunk lives while any of its blocks does.
std::shared_ptr<void> AllocateOnHugePages(size_t bytes);

}  // namespace nxrt::cpu
