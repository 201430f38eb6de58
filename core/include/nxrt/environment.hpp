// The process-level setup of nxrt that sessions share: where plugins are
// searched for, the log level, and the plugins loaded so far.
//
// Plugin folders given here are searched first, then NXRT_PLUGIN_PATH, then
// the folder of libnxrt (for a program linking nxrt statically, the lib
// folder beside its bin folder). The log level, when set, overrides NXRT_LOG_LEVEL for
// nxrt's and every plugin's logger.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "nxrt/support/export.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt {

namespace plugin_host {
class PluginRegistry;
}  // namespace plugin_host

struct EnvironmentOptions {
  std::vector<std::filesystem::path> plugin_folders;
  std::string log_level;  // trace, debug, info, warn, error, off; "" keeps the current level
};

// What discovery found for one plugin file.
struct PluginInfo {
  std::filesystem::path path;
  bool loaded = false;
  std::string name;
  std::string vendor;
  std::string version;
  uint32_t abi_version = 0;  // as the plugin declares it
  std::string error;         // why it could not be loaded, when !loaded
};

class NXRT_API Environment {
 public:
  // Refuses an unknown log level.
  static Result<std::shared_ptr<Environment>> Create(EnvironmentOptions options = {});
  // Sets the level of nxrt's and every plugin's logger for the process, from
  // now on, as EnvironmentOptions::log_level does at creation; refuses an
  // unknown level and changes nothing then.
  static Status SetLogLevel(const std::string& level);
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

  const EnvironmentOptions& options() const { return options_; }
  // Folders searched for plugins by name, in order.
  std::vector<std::filesystem::path> PluginSearchFolders() const;
  // Every libep_*.so on the search list.
  std::vector<PluginInfo> DiscoverPlugins();

  // The core's access to loading plugins.
  plugin_host::PluginRegistry& registry() { return *registry_; }

 private:
  explicit Environment(EnvironmentOptions options);

  EnvironmentOptions options_;
  std::unique_ptr<plugin_host::PluginRegistry> registry_;
};

}  // namespace nxrt
