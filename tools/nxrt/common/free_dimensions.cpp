#include "common/free_dimensions.hpp"

#include "common/name_value.hpp"

namespace nxrt::cli {

void AddFreeDimensionOption(CLI::App& command, std::vector<std::string>& values) {
  command.add_option("--free-dim", values,
                     "NAME=VALUE: fixes the symbolic dim NAME of the model's inputs for the "
                     "whole session; repeatable");
}

Result<std::vector<std::pair<std::string, int64_t>>> ParseFreeDimensions(
    const std::vector<std::string>& values) {
  std::vector<std::pair<std::string, int64_t>> overrides;
  for (const std::string& text : values) {
    NXRT_ASSIGN_OR_RETURN(auto pair, ParseNameExtent(text, "--free-dim"));
    overrides.push_back(std::move(pair));
  }
  return overrides;
}

}  // namespace nxrt::cli
