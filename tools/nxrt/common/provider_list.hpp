// The execution providers a command runs on, from its repeatable --ep
// option: names ("cpu", "mock") or library paths, in priority order, each
// value possibly a comma-separated list; with none given, the cpu EP alone.
// Each takes the options given for it with --ep-option NAME:KEY=VALUE.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "nxrt/session_options.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt::cli {

struct ProviderFlags {
  std::vector<std::string> providers;  // --ep values
  std::vector<std::string> options;    // --ep-option values
};

// Adds --ep and --ep-option to `command`, collecting their values into `flags`.
void AddProviderOptions(CLI::App& command, ProviderFlags& flags);

// The providers in priority order, each with its options. `threads`, when
// set, goes to the cpu EP (by name, or a path to libep_cpu.so) as its
// `threads` option; other EPs do not take it.
Result<std::vector<ExecutionProviderSpec>> ParseProviderList(const ProviderFlags& flags,
                                                             std::optional<int> threads = {});

}  // namespace nxrt::cli
