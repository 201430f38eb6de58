// How a command joins the nxrt command line: each command file registers a
// CLI11 subcommand whose parse callback hands main the action to run. The
// action answers the process exit status, or an error Status that main
// prints as one line.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "nxrt/support/status.hpp"

namespace nxrt::cli {

using CommandAction = std::function<Result<int>()>;

// Each sets `selected` when its subcommand is the one parsed.
void RegisterRunCommand(CLI::App& app, CommandAction& selected);
void RegisterTestCommand(CLI::App& app, CommandAction& selected);
void RegisterInspectCommand(CLI::App& app, CommandAction& selected);
void RegisterBenchCommand(CLI::App& app, CommandAction& selected);
void RegisterPluginsCommand(CLI::App& app, CommandAction& selected);
void RegisterGenerateCommand(CLI::App& app, CommandAction& selected);
void RegisterServeCommand(CLI::App& app, CommandAction& selected);

}  // namespace nxrt::cli
