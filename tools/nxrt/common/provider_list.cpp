#include "common/provider_list.hpp"

#include <algorithm>
#include <filesystem>

namespace nxrt::cli {
namespace {

bool IsCpuProvider(const std::string& name_or_path) {
  return name_or_path == "cpu" || std::filesystem::path(name_or_path).filename() == "libep_cpu.so";
}

}  // namespace

void AddProviderOptions(CLI::App& command, ProviderFlags& flags) {
  // One value per occurrence, so `--ep cpu MODEL` leaves MODEL to the positionals.
  command
      .add_option("--ep", flags.providers,
                  "execution provider name or library path, in priority order; repeatable "
                  "or comma-separated (default: cpu)")
      ->allow_extra_args(false);
  command
      .add_option("--ep-option", flags.options,
                  "an option for one execution provider, as NAME:KEY=VALUE with NAME as given "
                  "to --ep (e.g. cpu:threads=2); repeatable")
      ->allow_extra_args(false);
}

Result<std::vector<ExecutionProviderSpec>> ParseProviderList(const ProviderFlags& flags,
                                                             std::optional<int> threads) {
  std::vector<ExecutionProviderSpec> specs;
  for (const std::string& value : flags.providers) {
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
  for (const std::string& option : flags.options) {
    // The name may be a path holding ':' no more than the key holds '='.
    const size_t equals = option.find('=');
    const size_t colon = option.rfind(':', equals);
    if (equals == std::string::npos || colon == std::string::npos || colon == 0 ||
        equals == colon + 1) {
      return InvalidArgument("--ep-option '" + option +
                             "' is not NAME:KEY=VALUE; write e.g. --ep-option cpu:threads=2");
    }
    const std::string name = option.substr(0, colon);
    auto spec = std::find_if(specs.begin(), specs.end(), [&](const ExecutionProviderSpec& s) {
      return s.name_or_path == name;
    });
    if (spec == specs.end()) {
      std::string names;
      for (const ExecutionProviderSpec& s : specs)
        names += (names.empty() ? "" : ", ") + s.name_or_path;
      return InvalidArgument("--ep-option '" + option + "' is for '" + name +
                             "', which is not among the providers (" + names +
                             "); name one given to --ep");
    }
    spec->options.emplace_back(option.substr(colon + 1, equals - colon - 1),
                               option.substr(equals + 1));
  }
  return specs;
}

}  // namespace nxrt::cli
