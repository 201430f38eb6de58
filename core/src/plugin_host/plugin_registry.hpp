// Where plugins are found, and the plugins loaded so far.
//
// A plugin is named by path (anything with a '/' or ending in ".so") or by
// short name: `cpu` means libep_cpu.so, searched for in order in the
// configured folders, the colon-separated NXRT_PLUGIN_PATH, and the folder of
// libnxrt itself (where the build puts every plugin). The current folder is
// searched only where one of these names it ("."): an empty entry never
// stands for it. A registry loads each
// library once and keeps it; discovery lists every libep_*.so on the search
// list with its identity or the reason it could not be loaded.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "nxrt/support/status.hpp"
#include "plugin_host/plugin.hpp"

namespace nxrt::plugin_host {

struct DiscoveredPlugin {
  std::filesystem::path path;
  std::shared_ptr<Plugin> plugin;  // null when loading failed
  Status error;                    // why loading failed; OK when it did not
};

class PluginRegistry {
 public:
  explicit PluginRegistry(std::vector<std::filesystem::path> configured_folders = {});

  // Folders searched by name, in order, without duplicates.
  std::vector<std::filesystem::path> SearchFolders() const;

  // Loads by path or by short name (see above); cached per canonical path.
  Result<std::shared_ptr<Plugin>> Load(const std::string& name_or_path);
  Result<std::shared_ptr<Plugin>> LoadByName(const std::string& name);
  Result<std::shared_ptr<Plugin>> LoadFromPath(const std::filesystem::path& path);

  // Every libep_*.so in the search folders, first folder first, each file
  // name once (an earlier folder shadows a later one).
  std::vector<DiscoveredPlugin> Discover();

  // "libep_NAME.so".
  static std::string LibraryFileName(const std::string& name);
  // The folder holding libnxrt, or empty when it cannot be told. For a
  // program that links nxrt statically, the lib folder beside the program's
  // bin folder (the installed layout), else the program's own folder.
  static std::filesystem::path NxrtLibraryFolder();

 private:
  std::vector<std::filesystem::path> configured_folders_;
  std::mutex mutex_;
  std::map<std::filesystem::path, std::shared_ptr<Plugin>> loaded_;
};

}  // namespace nxrt::plugin_host
