// --memory-limit MIB, shared by the commands that run a model: the most the
// session's value buffers may hold at once (SessionOptions::
// memory_limit_bytes), so a model that asks for more fails with a line
// naming the node instead of running the machine out of memory.
#pragma once

#include <cstddef>

#include <CLI/CLI.hpp>

namespace nxrt::cli {

// Adds --memory-limit to `command`; `mebibytes` stays 0 (no limit) unless given.
void AddMemoryLimitOption(CLI::App& command, double& mebibytes);

size_t MemoryLimitBytes(double mebibytes);

}  // namespace nxrt::cli
