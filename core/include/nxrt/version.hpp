// nxrt's own version and the plugin ABI version this build of the host speaks.
#pragma once

#include "nxrt/support/export.hpp"

#include <cstdint>
#include <string>

namespace nxrt {

// "major.minor.patch" of libnxrt.
NXRT_API std::string Version();

// The highest plugin ABI version the host speaks (NXRT_EP_ABI_VERSION).
NXRT_API uint32_t HostAbiVersion();

}  // namespace nxrt
