#include "common/memory_limit.hpp"

#include <string>

#include "common/option_checks.hpp"

namespace nxrt::cli {

void AddMemoryLimitOption(CLI::App& command, double& mebibytes) {
  command
      .add_option("--memory-limit", mebibytes,
                  "MiB the session's activations and outputs may hold at once (default: no limit)")
      ->check(ZeroOrMore("MiB", "MIB"));
}

size_t MemoryLimitBytes(double mebibytes) {
  return static_cast<size_t>(mebibytes * (1 << 20));
}

}  // namespace nxrt::cli
