// NAME=VALUE option values (--input NAME=FILE.pb, --dim NAME=VALUE,
// --free-dim NAME=VALUE, --shape NAME=D,D,...), split at the last '=' so a model's value names may
// themselves hold '='.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "nxrt/support/status.hpp"

namespace nxrt::cli {

// `option` names the flag in the error, e.g. "--input".
Result<std::pair<std::string, std::string>> SplitNameValue(const std::string& text,
                                                           const std::string& option,
                                                           const std::string& value_hint);

// NAME=VALUE with VALUE a non-negative integer: a symbol name and its extent.
Result<std::pair<std::string, int64_t>> ParseNameExtent(const std::string& text,
                                                        const std::string& option);

// --dim values: symbol name to a non-negative extent.
Result<std::map<std::string, int64_t>> ParseDimBindings(const std::vector<std::string>& values);

// --shape values: input name to a whole shape, comma-separated non-negative
// extents, or "scalar" for rank 0.
Result<std::map<std::string, std::vector<int64_t>>> ParseShapeBindings(
    const std::vector<std::string>& values);

}  // namespace nxrt::cli
