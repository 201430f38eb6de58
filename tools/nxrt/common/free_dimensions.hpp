// --free-dim NAME=VALUE, shared by the commands that make a session: fixes a
// symbolic dim of the model's inputs before shape inference, as ONNX
// Runtime's free-dimension overrides (SessionOptions::
// free_dimension_overrides). Unlike --dim, which only sizes random inputs,
// it changes the session: shapes that follow from the dim become static, and
// an input of another extent is refused.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "nxrt/support/status.hpp"

namespace nxrt::cli {

// Adds --free-dim to `command`; `values` collects its NAME=VALUE texts.
void AddFreeDimensionOption(CLI::App& command, std::vector<std::string>& values);

// The overrides in the order given, for SessionOptions.
Result<std::vector<std::pair<std::string, int64_t>>> ParseFreeDimensions(
    const std::vector<std::string>& values);

}  // namespace nxrt::cli
