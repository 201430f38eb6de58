#include "nxrt/version.hpp"

#include "nxrt/ep_abi.h"

namespace nxrt {

std::string Version() {
  return "0.1.0";
}

uint32_t HostAbiVersion() {
  return NXRT_EP_ABI_VERSION;
}

}  // namespace nxrt
