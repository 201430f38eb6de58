#include "nxrt/environment.hpp"

#include "nxrt/support/log.hpp"
#include "plugin_host/plugin_registry.hpp"

namespace nxrt {

Environment::Environment(EnvironmentOptions options)
    : options_(std::move(options)),
      registry_(std::make_unique<plugin_host::PluginRegistry>(options_.plugin_folders)) {}

Environment::~Environment() = default;

Result<std::shared_ptr<Environment>> Environment::Create(EnvironmentOptions options) {
  if (!options.log_level.empty()) {
    NXRT_RETURN_IF_ERROR(SetLogLevel(options.log_level).WithContext("environment option"));
  }
  return std::shared_ptr<Environment>(new Environment(std::move(options)));
}

Status Environment::SetLogLevel(const std::string& level) {
  if (!nxrt::SetLogLevel(level)) {
    return InvalidArgument("log_level '" + level +
                           "' is unknown; use trace, debug, info, warn, error or off");
  }
  return Status::Ok();
}

std::vector<std::filesystem::path> Environment::PluginSearchFolders() const {
  return registry_->SearchFolders();
}

std::vector<PluginInfo> Environment::DiscoverPlugins() {
  std::vector<PluginInfo> infos;
  for (const auto& found : registry_->Discover()) {
    PluginInfo info;
    info.path = found.path;
    if (found.plugin) {
      info.loaded = true;
      info.name = found.plugin->name();
      info.vendor = found.plugin->vendor();
      info.version = found.plugin->version();
      info.abi_version = found.plugin->plugin_abi_version();
    } else {
      info.error = found.error.message();
    }
    infos.push_back(std::move(info));
  }
  return infos;
}

}  // namespace nxrt
