#include "cuda_options.hpp"

#include <charconv>
#include <limits>
#include <vector>

namespace nxrt::cuda {
namespace {

[[noreturn]] void Refuse(const std::string& message) {
  throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT, "cuda EP option " + message);
}

uint64_t ParseUnsigned(const std::string& key, const std::string& value, uint64_t max) {
  uint64_t parsed = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, error] = std::from_chars(value.data(), end, parsed);
  if (value.empty() || error != std::errc() || ptr != end || parsed > max) {
    Refuse("'" + key + "' needs a whole number from 0 to " + std::to_string(max) + ", not '" +
           value + "'");
  }
  return parsed;
}

bool ParseBool(const std::string& key, const std::string& value) {
  if (value == "1" || value == "true" || value == "on") return true;
  if (value == "0" || value == "false" || value == "off") return false;
  Refuse("'" + key + "' needs 1/0, true/false or on/off, not '" + value + "'");
}

}  // namespace

CudaOptions ParseCudaOptions(OptionList options) {
  CudaOptions parsed;
  for (const auto& [key, value] : options) {
    if (key == "device_id") {
      parsed.device_id = static_cast<int>(
          ParseUnsigned(key, value, static_cast<uint64_t>(std::numeric_limits<int>::max())));
    } else if (key == "memory_release_threshold") {
      parsed.memory_release_threshold =
          ParseUnsigned(key, value, std::numeric_limits<uint64_t>::max());
    } else if (key == "device_graphs") {
      parsed.device_graphs = ParseBool(key, value);
    } else {
      Refuse("'" + key +
             "' is unknown; known keys: device_id, memory_release_threshold, device_graphs");
    }
  }
  return parsed;
}

CudaOptions ParseCudaOptions(const sdk::Options& options) {
  std::vector<std::pair<std::string, std::string>> list;
  for (size_t i = 0; i < options.size(); ++i) {
    const auto [key, value] = options.at(i);
    list.emplace_back(std::string(key), std::string(value));
  }
  return ParseCudaOptions(list);
}

}  // namespace nxrt::cuda
