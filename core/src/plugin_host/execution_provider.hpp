// One execution-provider instance made by a plugin, as the core drives it.
//
// Wraps nxrt_ep*: claims nodes, makes kernels, and offers memory and device
// graphs with the ABI's documented defaults where the plugin has no entry
// (host memory, memcpy copies, a no-op synchronize, no device graphs). Calls
// other than memory and copies are serialised, as the ABI promises plugins.
// Every Kernel holds a shared_ptr to its provider, so the instance (and the
// library) outlive their kernels; tokens still captured when the provider
// dies are reset before it is destroyed.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "nxrt/ep_abi.h"
#include "nxrt/support/status.hpp"
#include "plugin_host/node_view.hpp"
#include "plugin_host/plugin.hpp"

namespace nxrt::plugin_host {

class Kernel;

struct ClaimDecision {
  bool claimed = false;
  std::string reason;  // the plugin's reason when declined
};

// What a kernel is made for; the provider fills in its own id.
struct ArtifactConfig {
  uint64_t executor = 0;
  uint64_t generation = 0;
};

using ProviderOptions = std::vector<std::pair<std::string, std::string>>;

class ExecutionProvider : public std::enable_shared_from_this<ExecutionProvider> {
 public:
  // Calls the plugin's create_ep with `options`.
  static Result<std::shared_ptr<ExecutionProvider>> Create(std::shared_ptr<Plugin> plugin,
                                                           ProviderOptions options = {});
  ~ExecutionProvider();
  ExecutionProvider(const ExecutionProvider&) = delete;
  ExecutionProvider& operator=(const ExecutionProvider&) = delete;

  // Unique within the process, never reused; nonzero.
  uint64_t id() const { return id_; }
  const std::string& name() const { return plugin_->name(); }
  const Plugin& plugin() const { return *plugin_; }
  const std::shared_ptr<Plugin>& plugin_ptr() const { return plugin_; }
  const ProviderOptions& options() const { return options_; }
  nxrt_ep* handle() const { return handle_; }

  // Asks the plugin to claim `node` at the given input infos and layouts (one
  // per node input). A decline is a ClaimDecision; an error is a failed claim.
  Result<ClaimDecision> Claim(const NodeView& node, int64_t opset,
                              std::span<const nxrt_value_info> inputs,
                              std::span<const nxrt_layout> layouts);
  // Claims at the node's inferred input infos, all contiguous.
  Result<ClaimDecision> Claim(const NodeView& node, int64_t opset);

  // Makes a kernel at concrete input shapes (one per node input, dtype
  // UNDEFINED for an absent one). The kernel keeps `node` alive.
  Result<std::unique_ptr<Kernel>> CreateKernel(const ArtifactConfig& config,
                                               std::shared_ptr<const NodeView> node,
                                               std::span<const nxrt_shape> inputs, int64_t opset);

  // Memory; defaults when the plugin has none: aligned host memory, memcpy,
  // nothing to synchronize.
  bool has_custom_memory() const;
  Result<void*> Alloc(size_t bytes, size_t alignment);
  void Free(void* ptr);
  Status CopyToDevice(void* dst, const void* src, size_t bytes);
  Status CopyToHost(void* dst, const void* src, size_t bytes);
  Status Synchronize();

  // Device graphs; Unsupported when has_device_graphs() is false.
  bool has_device_graphs() const { return device_graphs_; }
  Status BeginCapture(nxrt_graph_slot slot);
  Result<nxrt_graph_token> EndCapture(nxrt_graph_slot slot);
  Status Replay(nxrt_graph_token token);
  Status Reset(nxrt_graph_token token);
  // Tokens ended and not yet reset.
  size_t live_graph_count() const;

  // "EP 'cpu' (libep_cpu.so)", for error messages.
  std::string Describe() const;

 private:
  ExecutionProvider(std::shared_ptr<Plugin> plugin, ProviderOptions options);

  std::shared_ptr<Plugin> plugin_;
  ProviderOptions options_;
  uint64_t id_;
  nxrt_ep* handle_ = nullptr;
  bool device_graphs_ = false;
  mutable std::mutex mutex_;  // serialises claim, create_kernel and graph calls
  std::set<nxrt_graph_token> live_graphs_;
};

}  // namespace nxrt::plugin_host
