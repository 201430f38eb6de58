// The host's definition of nxrt_host_context: what the host knows about one
// loaded plugin when the plugin calls back (its name, for the logger).
//
// One exists per loaded Plugin and lives as long as it, so every EP and kernel
// of that plugin may keep the pointer it was given.
#pragma once

#include <memory>
#include <string>

#include <spdlog/spdlog.h>

#include "nxrt/ep_abi.h"

struct nxrt_host_context {
  std::string plugin_name;
  // Set once the plugin's name is known; until then the file name stands in.
  std::shared_ptr<spdlog::logger> logger;
};
