#include "common/environment_setup.hpp"

namespace nxrt::cli {

void AddEnvironmentOptions(CLI::App& command, EnvironmentFlags& flags) {
  command.add_option("--plugin-path", flags.plugin_paths,
                     "folder searched for plugins before NXRT_PLUGIN_PATH; repeatable");
  command.add_option("--log-level", flags.log_level,
                     "trace, debug, info, warn, error or off (default: NXRT_LOG_LEVEL, else warn)");
}

Result<std::shared_ptr<Environment>> MakeEnvironment(const EnvironmentFlags& flags) {
  EnvironmentOptions options;
  options.plugin_folders.assign(flags.plugin_paths.begin(), flags.plugin_paths.end());
  options.log_level = flags.log_level;
  return Environment::Create(std::move(options));
}

}  // namespace nxrt::cli
