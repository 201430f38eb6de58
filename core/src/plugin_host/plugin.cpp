#include "plugin_host/plugin.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <fstream>
#include <type_traits>

#include <boost/dll/shared_library.hpp>

#include "nxrt/support/log.hpp"
#include "plugin_host/abi_table.hpp"
#include "plugin_host/host_api.hpp"
#include "plugin_host/plugin_status.hpp"

namespace nxrt::plugin_host {

struct Plugin::Library {
  boost::dll::shared_library handle;
};

namespace {

std::string VersionText(uint32_t version) {
  return std::to_string(NXRT_EP_ABI_VERSION_MAJOR_OF(version)) + "." +
         std::to_string(NXRT_EP_ABI_VERSION_MINOR_OF(version));
}

// "ep_mock" -> "mock": the name to log under until the plugin tells its own.
std::string NameFromFile(const std::filesystem::path& path) {
  std::string stem = path.stem().string();
  for (const char* prefix : {"libep_", "lib"}) {
    if (stem.rfind(prefix, 0) == 0) return stem.substr(std::strlen(prefix));
  }
  return stem;
}

// Why dlopen refused `path`, in words a user can act on.
std::string LoadFailureCause(const std::filesystem::path& path, const char* loader_message) {
  std::array<unsigned char, 20> header{};
  std::ifstream file(path, std::ios::binary);
  file.read(reinterpret_cast<char*>(header.data()), header.size());
  const bool is_elf = file.gcount() >= 20 && header[0] == 0x7f && header[1] == 'E' &&
                      header[2] == 'L' && header[3] == 'F';
  std::string detail = loader_message ? std::string(" (") + loader_message + ")" : "";
  if (!is_elf) return "not a shared library (no ELF header)" + detail;
  const bool host_is_64 = sizeof(void*) == 8;
  const bool file_is_64 = header[4] == 2;
  uint16_t machine = 0;
  std::memcpy(&machine, &header[18], sizeof(machine));
#if defined(__x86_64__)
  const uint16_t host_machine = 62;
#elif defined(__aarch64__)
  const uint16_t host_machine = 183;
#else
  const uint16_t host_machine = machine;
#endif
  if (file_is_64 != host_is_64 || machine != host_machine) {
    return "built for another architecture (ELF machine " + std::to_string(machine) + ")" + detail;
  }
  return "the library could not be loaded" + detail;
}

Status Refuse(StatusCode code, const std::filesystem::path& path, const std::string& cause) {
  return Status(code, "plugin " + path.string() + ": " + cause);
}

}  // namespace

Result<std::shared_ptr<Plugin>> Plugin::Load(const std::filesystem::path& path) {
  std::error_code fs_error;
  if (!std::filesystem::exists(path, fs_error)) {
    return Refuse(StatusCode::kNotFound, path, "no such file; check the path");
  }
  if (std::filesystem::is_directory(path, fs_error)) {
    return Refuse(StatusCode::kInvalidArgument, path,
                  "is a folder, not a shared library; name the libep_*.so file");
  }
  std::shared_ptr<Plugin> plugin(new Plugin());
  plugin->library_ = std::make_unique<Library>();
  plugin->path_ = path;
  plugin->host_context_ = std::make_unique<nxrt_host_context>();
  plugin->host_context_->plugin_name = NameFromFile(path);
  plugin->host_context_->logger = GetLogger(plugin->host_context_->plugin_name);

  nxrt_ep_plugin_init_fn init = nullptr;
  try {
    boost::dll::fs::error_code load_error;
    dlerror();  // a stale message must not be taken for this load's
    plugin->library_->handle.load(
        path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, load_error);
    if (load_error || !plugin->library_->handle.is_loaded()) {
      return Refuse(StatusCode::kInvalidArgument, path, LoadFailureCause(path, dlerror()));
    }
    if (!plugin->library_->handle.has(NXRT_EP_ENTRY_SYMBOL)) {
      return Refuse(StatusCode::kInvalidArgument, path,
                    std::string("no entry symbol '") + NXRT_EP_ENTRY_SYMBOL +
                        "'; is it an nxrt plugin? define it with NXRT_EP_DEFINE_PLUGIN or export "
                        "it with NXRT_EP_EXPORT");
    }
    init = &plugin->library_->handle.get<std::remove_pointer_t<nxrt_ep_plugin_init_fn>>(
        NXRT_EP_ENTRY_SYMBOL);
  } catch (const std::exception& e) {
    return Refuse(StatusCode::kInternal, path, std::string("loading failed: ") + e.what());
  }

  const nxrt_ep_api* table = nullptr;
  Status init_status =
      TakeStatus(init(NXRT_EP_ABI_VERSION, HostApi(), plugin->host_context_.get(), &table));
  if (!init_status.ok()) {
    return Refuse(init_status.code(), path, "plugin init failed: " + init_status.message());
  }
  if (table == nullptr) {
    return Refuse(StatusCode::kFailedPrecondition, path,
                  "plugin init succeeded but returned no table; set *out to the plugin's table");
  }
  if (!TableCovers(table->struct_size, NXRT_TABLE_END_OF(nxrt_ep_api, abi_version))) {
    return Refuse(StatusCode::kFailedPrecondition, path,
                  "the plugin's table is " + std::to_string(table->struct_size) +
                      " bytes, too short to hold its ABI version; set struct_size");
  }
  plugin->plugin_abi_version_ = table->abi_version;
  const uint32_t plugin_major = NXRT_EP_ABI_VERSION_MAJOR_OF(table->abi_version);
  if (plugin_major != NXRT_EP_ABI_VERSION_MAJOR) {
    return Refuse(StatusCode::kFailedPrecondition, path,
                  "ABI major mismatch: the plugin implements " + VersionText(table->abi_version) +
                      ", this nxrt speaks " + VersionText(NXRT_EP_ABI_VERSION) +
                      "; rebuild the plugin against this nxrt's ep_abi.h");
  }
  plugin->abi_version_ = NXRT_EP_ABI_MAKE_VERSION(
      NXRT_EP_ABI_VERSION_MAJOR,
      std::min(NXRT_EP_ABI_VERSION_MINOR, NXRT_EP_ABI_VERSION_MINOR_OF(table->abi_version)));
  if (!TableCovers(table->struct_size, NXRT_TABLE_END_OF(nxrt_ep_api, kernel_api))) {
    return Refuse(StatusCode::kFailedPrecondition, path,
                  "the plugin's table is " + std::to_string(table->struct_size) +
                      " bytes, too short to hold the required entries (name to kernel_api)");
  }
  plugin->ep_api_ = NormalizedTable(*table);
  const nxrt_ep_api& api = plugin->ep_api_;
  if (!api.name || !api.vendor || !api.version || !api.create_ep || !api.destroy_ep || !api.claim ||
      !api.create_kernel || !api.kernel_api) {
    return Refuse(StatusCode::kFailedPrecondition, path,
                  "the plugin's table lacks a required entry (name, vendor, version, create_ep, "
                  "destroy_ep, claim, create_kernel or kernel_api)");
  }
  if (!TableCovers(api.kernel_api->struct_size, NXRT_TABLE_END_OF(nxrt_kernel_api, destroy))) {
    return Refuse(StatusCode::kFailedPrecondition, path,
                  "the plugin's kernel table is too short to hold compute and destroy");
  }
  plugin->kernel_api_ = NormalizedTable(*api.kernel_api);
  if (!plugin->kernel_api_.compute || !plugin->kernel_api_.destroy) {
    return Refuse(StatusCode::kFailedPrecondition, path,
                  "the plugin's kernel table lacks compute or destroy");
  }
  plugin->name_ = api.name;
  plugin->vendor_ = api.vendor;
  plugin->version_ = api.version;
  // The ABI keeps the kernel table pointer for the plugin's own use; the host
  // reads only its normalised copy.
  plugin->ep_api_.kernel_api = &plugin->kernel_api_;
  if (plugin->name_ != plugin->host_context_->plugin_name) {
    plugin->host_context_->plugin_name = plugin->name_;
    plugin->host_context_->logger = GetLogger(plugin->name_);
  }
  GetLogger()->debug("loaded plugin {} ({} {} by {}, ABI {} in force)", path.string(),
                     plugin->name_, plugin->version_, plugin->vendor_,
                     VersionText(plugin->abi_version_));
  return plugin;
}

Plugin::Plugin() = default;
Plugin::~Plugin() = default;

std::string Plugin::Describe() const {
  if (name_.empty()) return path_.string();
  return path_.string() + " (" + name_ + ")";
}

}  // namespace nxrt::plugin_host
