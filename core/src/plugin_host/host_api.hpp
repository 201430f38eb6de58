// The host table, nxrt_host_api: every service nxrt offers a plugin (statuses,
// logging, options, node access, compute-time services). One static table
// serves every plugin; per-plugin state travels in nxrt_host_context, per-node
// state in nxrt_node and per-call state in nxrt_compute_context.
#pragma once

#include "nxrt/ep_abi.h"

namespace nxrt::plugin_host {

// The table handed to every plugin's entry function; lives for the process.
const nxrt_host_api* HostApi();

}  // namespace nxrt::plugin_host
