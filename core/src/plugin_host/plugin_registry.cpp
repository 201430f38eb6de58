#include "plugin_host/plugin_registry.hpp"

#include <dlfcn.h>
#include <sys/auxv.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

namespace nxrt::plugin_host {
namespace {

bool LooksLikePath(const std::string& text) {
  return text.find('/') != std::string::npos ||
         (text.size() > 3 && text.compare(text.size() - 3, 3, ".so") == 0);
}

// The folders of a colon-separated list. An empty entry ("a::b", a leading
// or trailing ':') means the current folder to a shell's PATH; here it means
// nothing, so only a "." named on purpose searches the current folder.
std::vector<std::filesystem::path> SplitPathList(const char* list) {
  std::vector<std::filesystem::path> folders;
  if (list == nullptr) return folders;
  std::stringstream stream(list);
  std::string folder;
  while (std::getline(stream, folder, ':')) {
    if (!folder.empty()) folders.emplace_back(folder);
  }
  return folders;
}

std::filesystem::path Canonical(const std::filesystem::path& path) {
  std::error_code error;
  auto canonical = std::filesystem::weakly_canonical(path, error);
  return error ? path : canonical;
}

}  // namespace

PluginRegistry::PluginRegistry(std::vector<std::filesystem::path> configured_folders)
    : configured_folders_(std::move(configured_folders)) {}

std::string PluginRegistry::LibraryFileName(const std::string& name) {
  return "libep_" + name + ".so";
}

std::filesystem::path PluginRegistry::NxrtLibraryFolder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&PluginRegistry::NxrtLibraryFolder), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  // Linked statically, nxrt's code lies in the program itself, which is
  // installed in a bin folder with the plugins in the lib folder beside it.
  Dl_info program{};
  const bool in_program =
      dladdr(reinterpret_cast<const void*>(getauxval(AT_PHDR)), &program) != 0 &&
      program.dli_fbase == info.dli_fbase;
  if (in_program) {
    const std::filesystem::path executable = Canonical("/proc/self/exe");
    if (executable.parent_path().filename() == "bin") {
      return executable.parent_path().parent_path() / "lib";
    }
    return executable.parent_path();
  }
  return Canonical(info.dli_fname).parent_path();
}

std::vector<std::filesystem::path> PluginRegistry::SearchFolders() const {
  std::vector<std::filesystem::path> candidates = configured_folders_;
  for (auto& folder : SplitPathList(std::getenv("NXRT_PLUGIN_PATH"))) {
    candidates.push_back(std::move(folder));
  }
  if (auto own = NxrtLibraryFolder(); !own.empty()) candidates.push_back(own);
  std::vector<std::filesystem::path> folders;
  std::set<std::filesystem::path> seen;
  for (const auto& folder : candidates) {
    // An empty folder would join a library name into a bare file name, which
    // is looked up in the current folder.
    if (folder.empty()) continue;
    if (seen.insert(Canonical(folder)).second) folders.push_back(folder);
  }
  return folders;
}

Result<std::shared_ptr<Plugin>> PluginRegistry::Load(const std::string& name_or_path) {
  if (LooksLikePath(name_or_path)) return LoadFromPath(name_or_path);
  return LoadByName(name_or_path);
}

Result<std::shared_ptr<Plugin>> PluginRegistry::LoadByName(const std::string& name) {
  const std::string file = LibraryFileName(name);
  const auto folders = SearchFolders();
  for (const auto& folder : folders) {
    std::error_code error;
    if (std::filesystem::exists(folder / file, error)) return LoadFromPath(folder / file);
  }
  std::string searched;
  for (const auto& folder : folders) {
    searched += (searched.empty() ? "" : ", ") + folder.string();
  }
  return NotFound(
      "plugin '" + name + "': " + file + " not found in " +
      (searched.empty() ? std::string("any folder") : searched) +
      "; add its folder to NXRT_PLUGIN_PATH or to the plugin folders (nxrt --plugin-path, "
      "EnvironmentOptions::plugin_folders)");
}

Result<std::shared_ptr<Plugin>> PluginRegistry::LoadFromPath(const std::filesystem::path& path) {
  const auto key = Canonical(path);
  std::lock_guard lock(mutex_);
  if (auto found = loaded_.find(key); found != loaded_.end()) return found->second;
  NXRT_ASSIGN_OR_RETURN(std::shared_ptr<Plugin> plugin, Plugin::Load(path));
  loaded_.emplace(key, plugin);
  return plugin;
}

std::vector<DiscoveredPlugin> PluginRegistry::Discover() {
  std::vector<DiscoveredPlugin> found;
  std::set<std::string> seen_files;
  for (const auto& folder : SearchFolders()) {
    std::error_code error;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
      const std::string file = entry.path().filename().string();
      if (file.rfind("libep_", 0) == 0 && file.size() > 9 &&
          file.compare(file.size() - 3, 3, ".so") == 0) {
        files.push_back(entry.path());
      }
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      if (!seen_files.insert(file.filename().string()).second) continue;
      DiscoveredPlugin item;
      item.path = file;
      auto plugin = LoadFromPath(file);
      if (plugin.ok()) {
        item.plugin = std::move(plugin).value();
      } else {
        item.error = plugin.status();
      }
      found.push_back(std::move(item));
    }
  }
  return found;
}

}  // namespace nxrt::plugin_host
