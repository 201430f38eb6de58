// Where the CUDA EP tests find the plugins: the first NXRT_PLUGIN_PATH folder
// holding the library (how scripts/gpu-check points them into its bundle),
// else this build's lib/ folder.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

namespace nxrt_test {

inline std::filesystem::path BuiltPluginPath(const std::string& name) {
  const std::string file = "libep_" + name + ".so";
  if (const char* folders = std::getenv("NXRT_PLUGIN_PATH")) {
    std::stringstream list(folders);
    for (std::string folder; std::getline(list, folder, ':');) {
      if (!folder.empty() && std::filesystem::exists(std::filesystem::path(folder) / file)) {
        return std::filesystem::path(folder) / file;
      }
    }
  }
  return std::filesystem::path(NXRT_BINARY_DIR) / "lib" / file;
}

}  // namespace nxrt_test
