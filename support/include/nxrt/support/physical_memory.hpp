// The machine's physical memory: the bound of any one allocation a hostile
// size asks for when no memory limit is set.
#pragma once

#include <cstdint>

namespace nxrt {

// Bytes of physical memory, or UINT64_MAX when the system does not say.
uint64_t PhysicalMemoryBytes();

}  // namespace nxrt
