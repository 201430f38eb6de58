// The execution providers a command runs on, from its repeatable --ep
// option: names ("cpu", "mock") or library paths, in priority order, each
// value possibly a comma-separated list. With none given, the cpu EP alone.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "nxrt/session_options.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt::cli {

// Adds --ep to `command`, collecting its values into `values`.
void AddProviderOption(CLI::App& command, std::vector<std::string>& values);

// The providers in priority order. `threads`, when set, goes to the cpu EP
// (by name, or a path to libep_cpu.so) as its `threads` option; other EPs
// do not take it.
Result<std::vector<ExecutionProviderSpec>> ParseProviderList(const std::vector<std::string>& values,
                                                             std::optional<int> threads = {});

}  // namespace nxrt::cli
