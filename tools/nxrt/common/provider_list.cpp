#include "common/provider_list.hpp"

#include <filesystem>

namespace nxrt::cli {
namespace {

bool IsCpuProvider(const std::string& name_or_path) {
  return name_or_path == "cpu" || std::filesystem::path(name_or_path).filename() == "libep_cpu.so";
}

}  // namespace

void AddProviderOption(CLI::App& command, std::vector<std::string>& values) {
  // One value per occurrence, so `--ep cpu MODEL` leaves MODEL to the positionals.
  command
      .add_option("--ep", values,
                  "execution provider name or library path, in priority order; repeatable "
                  "or comma-separated (default: cpu)")
      ->allow_extra_args(false);
}

Result<std::vector<ExecutionProviderSpec>> ParseProviderList(const std::vector<std::string>& values,
                                                             std::optional<int> threads) {
  std::vector<ExecutionProviderSpec> specs;
  for (const std::string& value : values) {
    size_t start = 0;
    while (start <= value.size()) {
      const size_t comma = std::min(value.find(',', start), value.size());
      const std::string name = value.substr(start, comma - start);
      if (name.empty()) {
        return InvalidArgument("--ep '" + value +
                               "' holds an empty provider name; give names or library paths "
                               "separated by commas, e.g. --ep cuda,cpu");
      }
      specs.push_back({name, {}});
      start = comma + 1;
    }
  }
  if (specs.empty()) specs.push_back({"cpu", {}});
  if (threads) {
    if (*threads < 1) {
      return InvalidArgument("--threads " + std::to_string(*threads) +
                             ": give a positive number of threads");
    }
    for (ExecutionProviderSpec& spec : specs) {
      if (IsCpuProvider(spec.name_or_path)) {
        spec.options.emplace_back("threads", std::to_string(*threads));
      }
    }
  }
  return specs;
}

}  // namespace nxrt::cli
