#include "plugin_host/execution_provider.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "nxrt/support/log.hpp"
#include "plugin_host/kernel.hpp"
#include "plugin_host/plugin_options.hpp"
#include "plugin_host/plugin_status.hpp"

namespace nxrt::plugin_host {
namespace {

uint64_t NextProviderId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

std::string SlotName(nxrt_graph_slot slot) {
  return slot == NXRT_GRAPH_SLOT_VERIFY ? "verify" : "primary";
}

}  // namespace

ExecutionProvider::ExecutionProvider(std::shared_ptr<Plugin> plugin, ProviderOptions options)
    : plugin_(std::move(plugin)), options_(std::move(options)), id_(NextProviderId()) {}

Result<std::shared_ptr<ExecutionProvider>> ExecutionProvider::Create(std::shared_ptr<Plugin> plugin,
                                                                     ProviderOptions options) {
  if (!plugin) return InvalidArgument("no plugin given to create an execution provider from");
  std::shared_ptr<ExecutionProvider> provider(
      new ExecutionProvider(std::move(plugin), std::move(options)));
  const nxrt_options abi_options(provider->options_);
  nxrt_ep* handle = nullptr;
  Status created = TakeStatus(provider->plugin_->ep_api().create_ep(
      provider->plugin_->host_context(), &abi_options, &handle));
  if (!created.ok()) {
    return created.WithContext(provider->Describe() + ": create_ep failed");
  }
  if (handle == nullptr) {
    return Internal(provider->Describe() + ": create_ep succeeded but returned no EP instance");
  }
  provider->handle_ = handle;
  const Plugin& p = *provider->plugin_;
  const bool has_graph_entries =
      p.begin_capture_fn() && p.end_capture_fn() && p.replay_fn() && p.reset_fn();
  provider->device_graphs_ = has_graph_entries && (p.device_graphs_supported_fn() == nullptr ||
                                                   p.device_graphs_supported_fn()(handle) != 0);
  return provider;
}

ExecutionProvider::~ExecutionProvider() {
  if (handle_ == nullptr) return;
  for (nxrt_graph_token token : live_graphs_) {
    Status reset = TakeStatus(plugin_->reset_fn()(handle_, token));
    if (!reset.ok()) GetLogger()->warn("{}: {}", Describe(), reset.message());
  }
  plugin_->ep_api().destroy_ep(handle_);
}

std::string ExecutionProvider::Describe() const {
  return "EP '" + plugin_->name() + "' (" + plugin_->path().filename().string() + ")";
}

Result<ClaimDecision> ExecutionProvider::Claim(const NodeView& node, int64_t opset,
                                               std::span<const nxrt_value_info> inputs,
                                               std::span<const nxrt_layout> layouts) {
  if (inputs.size() != layouts.size()) {
    return InvalidArgument(node.Describe() + ": claim on " + Describe() + " got " +
                           std::to_string(inputs.size()) + " input infos but " +
                           std::to_string(layouts.size()) + " layouts");
  }
  nxrt_status* answer;
  {
    std::lock_guard lock(mutex_);
    answer = plugin_->ep_api().claim(handle_, &node, opset, inputs.data(), layouts.data(),
                                     inputs.size());
  }
  Status status = TakeStatus(answer);
  if (status.ok()) return ClaimDecision{true, ""};
  if (status.code() == StatusCode::kUnsupported) return ClaimDecision{false, status.message()};
  return status.WithContext(node.Describe() + ": claim failed on " + Describe());
}

Result<ClaimDecision> ExecutionProvider::Claim(const NodeView& node, int64_t opset) {
  const std::vector<nxrt_layout> layouts(node.input_infos().size(), NXRT_LAYOUT_CONTIGUOUS);
  return Claim(node, opset, node.input_infos(), layouts);
}

Result<std::unique_ptr<Kernel>> ExecutionProvider::CreateKernel(
    const ArtifactConfig& config, std::shared_ptr<const NodeView> node,
    std::span<const nxrt_shape> inputs, int64_t opset) {
  if (!node) return InvalidArgument(Describe() + ": CreateKernel needs a node");
  const nxrt_artifact_config abi_config{sizeof(nxrt_artifact_config), id_, config.executor,
                                        config.generation};
  nxrt_kernel* handle = nullptr;
  nxrt_status* answer;
  {
    std::lock_guard lock(mutex_);
    answer = plugin_->ep_api().create_kernel(handle_, &abi_config, node.get(), inputs.data(),
                                             inputs.size(), opset, &handle);
  }
  Status status = TakeStatus(answer);
  if (!status.ok()) {
    return status.WithContext(node->Describe() + ": create_kernel failed on " + Describe());
  }
  if (handle == nullptr) {
    return Internal(node->Describe() + ": create_kernel on " + Describe() +
                    " succeeded but returned no kernel");
  }
  return std::make_unique<Kernel>(shared_from_this(), std::move(node), handle);
}

bool ExecutionProvider::has_custom_memory() const {
  return plugin_->alloc_fn() != nullptr;
}

Result<void*> ExecutionProvider::Alloc(size_t bytes, size_t alignment) {
  if (auto alloc = plugin_->alloc_fn(); alloc && plugin_->free_fn()) {
    void* ptr = nullptr;
    NXRT_RETURN_IF_ERROR(
        TakeStatus(alloc(handle_, bytes, alignment, &ptr))
            .WithContext(Describe() + ": alloc of " + std::to_string(bytes) + " bytes failed"));
    return ptr;
  }
  if ((alignment & (alignment - 1)) != 0) {
    return InvalidArgument(Describe() + ": alignment " + std::to_string(alignment) +
                           " is not a power of two");
  }
  const size_t align = std::max(alignment, alignof(std::max_align_t));
  // aligned_alloc needs a size that is a multiple of the alignment.
  const size_t rounded = ((std::max<size_t>(bytes, 1) + align - 1) / align) * align;
  void* ptr = std::aligned_alloc(align, rounded);
  if (ptr == nullptr) {
    return Status(StatusCode::kOutOfMemory,
                  Describe() + ": cannot allocate " + std::to_string(bytes) + " host bytes");
  }
  return ptr;
}

void ExecutionProvider::Free(void* ptr) {
  if (ptr == nullptr) return;
  if (plugin_->alloc_fn() && plugin_->free_fn()) {
    plugin_->free_fn()(handle_, ptr);
  } else {
    std::free(ptr);
  }
}

Status ExecutionProvider::CopyToDevice(void* dst, const void* src, size_t bytes) {
  if (auto copy = plugin_->copy_to_device_fn()) {
    Status copied = TakeStatus(copy(handle_, dst, src, bytes));
    // Context only on failure: a successful copy must not allocate.
    return copied.ok() ? copied : copied.WithContext(Describe() + ": copy to device");
  }
  if (bytes != 0) std::memcpy(dst, src, bytes);
  return Status::Ok();
}

Status ExecutionProvider::CopyToHost(void* dst, const void* src, size_t bytes) {
  if (auto copy = plugin_->copy_to_host_fn()) {
    Status copied = TakeStatus(copy(handle_, dst, src, bytes));
    return copied.ok() ? copied : copied.WithContext(Describe() + ": copy to host");
  }
  if (bytes != 0) std::memcpy(dst, src, bytes);
  return Status::Ok();
}

Status ExecutionProvider::Synchronize() {
  if (auto sync = plugin_->synchronize_fn()) {
    return TakeStatus(sync(handle_)).WithContext(Describe() + ": synchronize");
  }
  return Status::Ok();
}

Status ExecutionProvider::BeginCapture(nxrt_graph_slot slot) {
  if (!device_graphs_) return Unsupported(Describe() + " does not capture device graphs");
  std::lock_guard lock(mutex_);
  return TakeStatus(plugin_->begin_capture_fn()(handle_, slot))
      .WithContext(Describe() + ": begin capture of the " + SlotName(slot) + " slot");
}

Result<nxrt_graph_token> ExecutionProvider::EndCapture(nxrt_graph_slot slot) {
  if (!device_graphs_) return Unsupported(Describe() + " does not capture device graphs");
  std::lock_guard lock(mutex_);
  nxrt_graph_token token = 0;
  NXRT_RETURN_IF_ERROR(
      TakeStatus(plugin_->end_capture_fn()(handle_, slot, &token))
          .WithContext(Describe() + ": end capture of the " + SlotName(slot) + " slot"));
  if (token == 0) {
    return Internal(Describe() + ": end capture of the " + SlotName(slot) +
                    " slot returned the null token");
  }
  live_graphs_.insert(token);
  return token;
}

Status ExecutionProvider::Replay(nxrt_graph_token token) {
  if (!device_graphs_) return Unsupported(Describe() + " does not capture device graphs");
  std::lock_guard lock(mutex_);
  if (!live_graphs_.contains(token)) {
    return InvalidArgument(Describe() + ": replay of graph token " + std::to_string(token) +
                           ", which is not a live capture of this EP");
  }
  Status replayed = TakeStatus(plugin_->replay_fn()(handle_, token));
  return replayed.ok() ? replayed : replayed.WithContext(Describe() + ": replay");
}

Status ExecutionProvider::Reset(nxrt_graph_token token) {
  if (!device_graphs_) return Unsupported(Describe() + " does not capture device graphs");
  std::lock_guard lock(mutex_);
  if (live_graphs_.erase(token) == 0) {
    return InvalidArgument(Describe() + ": reset of graph token " + std::to_string(token) +
                           ", which is not a live capture of this EP");
  }
  return TakeStatus(plugin_->reset_fn()(handle_, token)).WithContext(Describe() + ": reset");
}

size_t ExecutionProvider::live_graph_count() const {
  std::lock_guard lock(mutex_);
  return live_graphs_.size();
}

}  // namespace nxrt::plugin_host
