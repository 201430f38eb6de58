// The options every command shares for the process environment: extra
// plugin folders (--plugin-path, searched before NXRT_PLUGIN_PATH) and the
// log level (--log-level, overriding NXRT_LOG_LEVEL).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "nxrt/environment.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt::cli {

struct EnvironmentFlags {
  std::vector<std::string> plugin_paths;
  std::string log_level;
};

void AddEnvironmentOptions(CLI::App& command, EnvironmentFlags& flags);

Result<std::shared_ptr<Environment>> MakeEnvironment(const EnvironmentFlags& flags);

}  // namespace nxrt::cli
