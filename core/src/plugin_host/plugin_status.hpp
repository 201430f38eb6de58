// The host side of nxrt_status, the error object that crosses the plugin ABI.
//
// The host makes every status (host->status_create); whoever receives one
// owns it and releases it once. TakeStatus turns a status a plugin returned
// into an nxrt::Status and releases it, so a status never leaks or is freed
// twice on the C++ side.
#pragma once

#include <cstddef>
#include <string_view>

#include "nxrt/ep_abi.h"
#include "nxrt/support/status.hpp"

namespace nxrt::plugin_host {

// Converts and releases `status`; NULL is OK.
Status TakeStatus(nxrt_status* status);

// A new status owned by the caller (NULL for an OK status), for host
// functions that answer the plugin.
nxrt_status* MakeStatus(const Status& status);
nxrt_status* MakeStatus(nxrt_status_code code, std::string_view message);

// The host-table functions behind nxrt_host_api's status entries.
nxrt_status* StatusCreate(nxrt_status_code code, const char* message);
void StatusRelease(nxrt_status* status);
nxrt_status_code StatusCodeOf(const nxrt_status* status);
const char* StatusMessageOf(const nxrt_status* status);

StatusCode FromAbiCode(nxrt_status_code code);
nxrt_status_code ToAbiCode(StatusCode code);

// Statuses made and not yet released, for ownership tests.
size_t LiveStatusCount();

}  // namespace nxrt::plugin_host
