// `nxrt plugins`: every plugin file (libep_*.so) on the search list, with its
// path, name, vendor, version and ABI version, or why it could not be loaded.
// The search list is --plugin-path folders, then NXRT_PLUGIN_PATH, then the
// folder of libnxrt.
#include <cstdio>
#include <string>
#include <vector>

#include "commands/command.hpp"
#include "common/environment_setup.hpp"
#include "common/json_writer.hpp"
#include "nxrt/ep_abi.h"

namespace nxrt::cli {
namespace {

struct PluginsFlags {
  bool json = false;
  EnvironmentFlags environment;
};

std::string AbiText(uint32_t version) {
  return std::to_string(NXRT_EP_ABI_VERSION_MAJOR_OF(version)) + "." +
         std::to_string(NXRT_EP_ABI_VERSION_MINOR_OF(version));
}

void PrintJson(const std::vector<std::filesystem::path>& folders,
               const std::vector<PluginInfo>& plugins) {
  JsonWriter json;
  json.BeginObject().Key("host_abi_version").String(AbiText(NXRT_EP_ABI_VERSION));
  json.Key("search_folders").BeginArray();
  for (const auto& folder : folders) json.String(folder.string());
  json.EndArray().Key("plugins").BeginArray();
  for (const PluginInfo& p : plugins) {
    json.BeginObject().Key("path").String(p.path.string()).Key("loaded").Bool(p.loaded);
    if (p.loaded) {
      json.Key("name").String(p.name).Key("vendor").String(p.vendor);
      json.Key("version").String(p.version).Key("abi_version").String(AbiText(p.abi_version));
    } else {
      json.Key("error").String(p.error);
    }
    json.EndObject();
  }
  json.EndArray().EndObject();
  std::printf("%s\n", json.text().c_str());
}

void PrintText(const std::vector<std::filesystem::path>& folders,
               const std::vector<PluginInfo>& plugins) {
  std::printf("host ABI %s; searched:", AbiText(NXRT_EP_ABI_VERSION).c_str());
  for (const auto& folder : folders) std::printf(" %s", folder.string().c_str());
  std::printf("\n");
  if (plugins.empty()) std::printf("no plugins (libep_*.so) found\n");
  for (const PluginInfo& p : plugins) {
    if (p.loaded) {
      std::printf("%-12s %-8s ABI %-5s vendor %-16s %s\n", p.name.c_str(), p.version.c_str(),
                  AbiText(p.abi_version).c_str(), p.vendor.c_str(), p.path.string().c_str());
    } else {
      std::printf("%-12s cannot be loaded: %s\n", p.path.filename().string().c_str(),
                  p.error.c_str());
    }
  }
}

Result<int> RunPlugins(const PluginsFlags& flags) {
  NXRT_ASSIGN_OR_RETURN(std::shared_ptr<Environment> environment,
                        MakeEnvironment(flags.environment));
  const auto folders = environment->PluginSearchFolders();
  const auto plugins = environment->DiscoverPlugins();
  if (flags.json) {
    PrintJson(folders, plugins);
  } else {
    PrintText(folders, plugins);
  }
  return 0;
}

}  // namespace

void RegisterPluginsCommand(CLI::App& app, CommandAction& selected) {
  auto flags = std::make_shared<PluginsFlags>();
  CLI::App* command = app.add_subcommand(
      "plugins", "list the plugins on the search list with their identity, or why they fail");
  AddEnvironmentOptions(*command, flags->environment);
  command->add_flag("--json", flags->json, "print one JSON object instead of text");
  command->callback([flags, &selected] { selected = [flags] { return RunPlugins(*flags); }; });
}

}  // namespace nxrt::cli
