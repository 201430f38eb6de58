// Checks shared by the options of several commands.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace nxrt::cli {

// Accepts a number, 0 or more; otherwise the usage error reads "'TEXT' is
// not a number of `unit`, 0 (no limit) or more". `name` stands for the value
// in --help.
CLI::Validator ZeroOrMore(const std::string& unit, const std::string& name);

}  // namespace nxrt::cli
