// A loaded execution-provider plugin: the shared library, its negotiated ABI
// version and its tables.
//
// Load refuses, with one line naming the file and the cause, a missing file, a
// file that is not a loadable library (or is for another architecture), a
// library without the entry symbol, an ABI major other than the host's, a
// table too short to hold the required entries, and a failed plugin init. The
// tables are normalised copies (see abi_table.hpp), so an optional entry a
// plugin does not have, or that lies past its struct_size, reads as nullptr.
// Everything a plugin makes holds a shared_ptr<Plugin>, which keeps the
// library loaded.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "nxrt/ep_abi.h"
#include "nxrt/support/status.hpp"
#include "plugin_host/host_context.hpp"

namespace nxrt::plugin_host {

class Plugin {
 public:
  static Result<std::shared_ptr<Plugin>> Load(const std::filesystem::path& path);

  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  const std::filesystem::path& path() const { return path_; }
  const std::string& name() const { return name_; }
  const std::string& vendor() const { return vendor_; }
  const std::string& version() const { return version_; }
  // The version in force: the host's major, the smaller of the two minors.
  uint32_t abi_version() const { return abi_version_; }
  // The version the plugin's table declares.
  uint32_t plugin_abi_version() const { return plugin_abi_version_; }

  // Normalised tables: entries the plugin lacks are nullptr.
  const nxrt_ep_api& ep_api() const { return ep_api_; }
  const nxrt_kernel_api& kernel_api() const { return kernel_api_; }
  nxrt_host_context* host_context() { return host_context_.get(); }

  // Optional EP entries, nullptr when absent.
  auto alloc_fn() const { return ep_api_.alloc; }
  auto free_fn() const { return ep_api_.free; }
  auto copy_to_device_fn() const { return ep_api_.copy_to_device; }
  auto copy_to_host_fn() const { return ep_api_.copy_to_host; }
  auto synchronize_fn() const { return ep_api_.synchronize; }
  auto begin_capture_fn() const { return ep_api_.begin_capture; }
  auto end_capture_fn() const { return ep_api_.end_capture; }
  auto replay_fn() const { return ep_api_.replay; }
  auto reset_fn() const { return ep_api_.reset; }
  auto device_graphs_supported_fn() const { return ep_api_.device_graphs_supported; }

  // "libep_cpu.so (cpu)": the file, and the plugin name once known.
  std::string Describe() const;

 private:
  Plugin();
  struct Library;  // the Boost.DLL handle, kept out of this header

  std::filesystem::path path_;
  // Declared before the library so it is destroyed after the library unloads.
  std::unique_ptr<nxrt_host_context> host_context_;
  std::unique_ptr<Library> library_;
  std::string name_;
  std::string vendor_;
  std::string version_;
  uint32_t abi_version_ = 0;
  uint32_t plugin_abi_version_ = 0;
  nxrt_ep_api ep_api_{};
  nxrt_kernel_api kernel_api_{};
};

}  // namespace nxrt::plugin_host
