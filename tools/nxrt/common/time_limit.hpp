// --time-limit SECONDS, shared by the commands that run a model: a run that
// takes longer stops between two nodes (RunOptions::deadline), a Loop's body
// included, and the command fails with one line naming the node.
#pragma once

#include <chrono>
#include <optional>

#include <CLI/CLI.hpp>

#include "nxrt/support/status.hpp"

namespace nxrt::cli {

// Adds --time-limit to `command`; `seconds` stays 0 (no limit) unless given.
void AddTimeLimitOption(CLI::App& command, double& seconds);

// The deadline of a run starting now under a limit of `seconds`; none for 0.
std::optional<std::chrono::steady_clock::time_point> RunDeadline(double seconds);

// `status`, with what to do added when it is a stop at the deadline.
Status WithTimeLimitAdvice(Status status);

}  // namespace nxrt::cli
