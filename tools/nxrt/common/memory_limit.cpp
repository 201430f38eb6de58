#include "common/memory_limit.hpp"

#include <exception>
#include <string>

namespace nxrt::cli {

void AddMemoryLimitOption(CLI::App& command, double& mebibytes) {
  command
      .add_option("--memory-limit", mebibytes,
                  "MiB the session's activations and outputs may hold at once (default: no limit)")
      ->check(CLI::Validator(
          [](std::string& text) {
            try {
              if (std::stod(text) >= 0) return std::string();
            } catch (const std::exception&) {
            }
            return "'" + text + "' is not a number of MiB, 0 (no limit) or more";
          },
          "MIB"));
}

size_t MemoryLimitBytes(double mebibytes) {
  return static_cast<size_t>(mebibytes * (1 << 20));
}

}  // namespace nxrt::cli
