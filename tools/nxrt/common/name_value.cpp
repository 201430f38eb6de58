#include "common/name_value.hpp"

#include <algorithm>
#include <charconv>

namespace nxrt::cli {

Result<std::pair<std::string, std::string>> SplitNameValue(const std::string& text,
                                                           const std::string& option,
                                                           const std::string& value_hint) {
  const size_t equals = text.rfind('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) {
    return InvalidArgument(option + " '" + text + "': expected NAME=" + value_hint);
  }
  return std::make_pair(text.substr(0, equals), text.substr(equals + 1));
}

Result<std::pair<std::string, int64_t>> ParseNameExtent(const std::string& text,
                                                        const std::string& option) {
  NXRT_ASSIGN_OR_RETURN(auto pair, SplitNameValue(text, option, "VALUE"));
  const std::string& digits = pair.second;
  int64_t extent = -1;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), extent);
  if (error != std::errc() || end != digits.data() + digits.size() || extent < 0) {
    return InvalidArgument(option + " '" + text + "': the value must be a non-negative integer");
  }
  return std::make_pair(pair.first, extent);
}

Result<std::map<std::string, int64_t>> ParseDimBindings(const std::vector<std::string>& values) {
  std::map<std::string, int64_t> dims;
  for (const std::string& text : values) {
    NXRT_ASSIGN_OR_RETURN(auto pair, ParseNameExtent(text, "--dim"));
    dims[pair.first] = pair.second;
  }
  return dims;
}

Result<std::map<std::string, std::vector<int64_t>>> ParseShapeBindings(
    const std::vector<std::string>& values) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const std::string& text : values) {
    NXRT_ASSIGN_OR_RETURN(auto pair, SplitNameValue(text, "--shape", "D,D,... or NAME=scalar"));
    std::vector<int64_t> dims;
    const std::string& list = pair.second;
    for (size_t begin = 0; list != "scalar" && begin <= list.size();) {
      const size_t comma = std::min(list.find(',', begin), list.size());
      int64_t extent = -1;
      const auto [end, error] = std::from_chars(list.data() + begin, list.data() + comma, extent);
      if (error != std::errc() || end != list.data() + comma || extent < 0) {
        return InvalidArgument("--shape '" + text +
                               "': each dim must be a non-negative integer, as in x=1,3,48,320");
      }
      dims.push_back(extent);
      begin = comma + 1;
    }
    if (!shapes.emplace(pair.first, std::move(dims)).second) {
      return InvalidArgument("--shape '" + text + "': input '" + pair.first + "' is given twice");
    }
  }
  return shapes;
}

}  // namespace nxrt::cli
