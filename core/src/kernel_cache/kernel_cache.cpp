#include "kernel_cache/kernel_cache.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "kernel_cache/constant_inputs.hpp"
#include "nxrt/support/checked_math.hpp"
#include "nxrt/support/log.hpp"

namespace nxrt::kernel_cache {
namespace {

using plugin_host::Kernel;
using plugin_host::NodeView;
using plugin_host::SharedConstantState;

// Hit counts are statistics only, so at the maximum they stay there rather
// than fail a dispatch or wrap to a misleading small number.
void SaturatingAdd(std::atomic<uint64_t>& counter, uint64_t amount) {
  uint64_t current = counter.load(std::memory_order_relaxed);
  uint64_t next = 0;
  do {
    next = current > std::numeric_limits<uint64_t>::max() - amount
               ? std::numeric_limits<uint64_t>::max()
               : current + amount;
  } while (next != current &&
           !counter.compare_exchange_weak(current, next, std::memory_order_relaxed));
}

// The node's inferred infos with the concrete dims put in: what a claim at
// concrete shapes sees. `dims` backs the pointers of the result.
std::vector<nxrt_value_info> ConcreteInfos(const NodeView& node, std::span<const InputShape> shapes,
                                           std::vector<std::vector<nxrt_dim>>& dims) {
  std::vector<nxrt_value_info> infos(node.input_infos().begin(), node.input_infos().end());
  dims.resize(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    nxrt_value_info& info = infos[i];
    if (shapes[i].absent) {
      info.kind = NXRT_VALUE_NONE;
      info.rank = -1;
      info.dims = nullptr;
      continue;
    }
    // A sequence has no single shape; its element info stays as inferred.
    if (info.kind != NXRT_VALUE_TENSOR) continue;
    for (int64_t extent : shapes[i].dims) dims[i].push_back({sizeof(nxrt_dim), extent, nullptr});
    info.rank = static_cast<int64_t>(shapes[i].dims.size());
    info.dims = dims[i].empty() ? nullptr : dims[i].data();
  }
  return infos;
}

std::vector<nxrt_shape> AbiShapes(const NodeView& node, std::span<const InputShape> shapes) {
  std::vector<nxrt_shape> abi(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    const std::vector<int64_t>& dims = shapes[i].dims;
    abi[i] = nxrt_shape{sizeof(nxrt_shape),
                        shapes[i].absent ? NXRT_DTYPE_UNDEFINED : node.input_infos()[i].dtype,
                        shapes[i].absent ? 0 : dims.size(), dims.empty() ? nullptr : dims.data()};
  }
  return abi;
}

Status DeclinedError(const NodeView& node, int64_t opset, std::span<const InputShape> shapes,
                     const plugin_host::ExecutionProvider& provider, const std::string& reason) {
  const graph::Node& n = node.node();
  return Unsupported(node.Describe() + " (domain '" + (n.domain.empty() ? "ai.onnx" : n.domain) +
                     "', opset " + std::to_string(opset) + ") at input shapes " +
                     FormatShapes(shapes) + " is declined by " + provider.Describe() + ": " +
                     reason + "; add an EP that supports it or change the input shapes");
}

// The indices of `variants` a new variant at `shapes` displaces, in the
// order they go: when it serves other shapes, every variant at its ranks
// (it stands for them all); then the least recently used ones past `bound`.
// The new variant itself is never one of them.
std::vector<size_t> Displaced(const std::vector<std::unique_ptr<CacheEntry>>& variants,
                              std::span<const InputShape> shapes, bool serves_other_shapes,
                              size_t bound) {
  std::vector<size_t> displaced;
  std::vector<size_t> kept;
  for (size_t i = 0; i < variants.size(); ++i) {
    (serves_other_shapes && variants[i]->key.MatchesRanks(shapes) ? displaced : kept).push_back(i);
  }
  const auto last_used = [&](size_t i) {
    return variants[i]->last_used.load(std::memory_order_relaxed);
  };
  std::sort(kept.begin(), kept.end(),
            [&](size_t a, size_t b) { return last_used(a) < last_used(b); });
  const size_t room = bound - 1;  // for the old variants beside the new one
  for (size_t i = 0; kept.size() > room + i; ++i) displaced.push_back(kept[i]);
  return displaced;
}

}  // namespace

KernelCache::KernelCache(DeviceGraphResetter& device_graphs, KernelCacheOptions options)
    : device_graphs_(device_graphs),
      variants_per_node_(std::max<size_t>(options.variants_per_node, 1)),
      readiness_(options.readiness_epoch),
      hits_(options.counters.hits),
      misses_(options.counters.misses),
      prebind_hits_(options.counters.prebind_hits),
      evictions_(options.counters.evictions) {}

KernelCache::~KernelCache() = default;

KernelCache::Entry* KernelCache::Find(const NodeRef& node,
                                      std::span<const InputShape> shapes) const {
  auto found = nodes_.find(node);
  if (found == nodes_.end()) return nullptr;
  for (const std::unique_ptr<Entry>& entry : found->second.variants) {
    if (entry->Serves(shapes)) return entry.get();
  }
  return nullptr;
}

KernelRef KernelCache::GetPrebound(const PreBinding& binding, std::span<const InputShape> shapes) {
  if (!binding.Matches(shapes)) return nullptr;
  std::shared_lock lock(entries_mutex_);
  Entry* entry = PreboundEntry(binding, shapes);
  if (entry == nullptr) return nullptr;
  entry->last_used.store(Tick(), std::memory_order_relaxed);
  SaturatingAdd(prebind_hits_, 1);
  return entry->kernel;
}

KernelCache::Entry* KernelCache::PreboundEntry(const PreBinding& binding,
                                               std::span<const InputShape> shapes) const {
  // Entries are owned through unique_ptr, so one not erased has not moved.
  return StillBound(binding) ? binding.entry_ : Find(binding.key().node, shapes);
}

bool KernelCache::StillBound(const PreBinding& binding) const {
  return binding.cache_ == this && binding.entry_ != nullptr &&
         binding.erasures_ == erasures_.load(std::memory_order_relaxed);
}

void KernelCache::AddPreboundHits(uint64_t hits) {
  SaturatingAdd(prebind_hits_, hits);
}

bool KernelCache::HasPrebound(const PreBinding& binding, std::span<const InputShape> shapes) const {
  if (!binding.Matches(shapes)) return false;
  std::shared_lock lock(entries_mutex_);
  return PreboundEntry(binding, shapes) != nullptr;
}

KernelRef KernelCache::LookUpHit(const NodeRef& node, std::span<const InputShape> shapes,
                                 PreBinding& binding) {
  std::shared_lock lock(entries_mutex_);
  Entry* entry = Find(node, shapes);
  if (entry == nullptr) return nullptr;
  entry->last_used.store(Tick(), std::memory_order_relaxed);
  SaturatingAdd(hits_, 1);
  binding.Bind(node, shapes, this, entry, erasures_.load(std::memory_order_relaxed));
  return entry->kernel;
}

Result<KernelRef> KernelCache::GetOrCreate(const KernelRequest& request, PreBinding& binding) {
  if (!request.node || request.provider == nullptr) {
    return InvalidArgument("kernel cache: a kernel request needs a node view and an EP");
  }
  const NodeView& view = *request.node;
  const std::span<const InputShape> shapes = request.input_shapes;
  if (shapes.size() != view.input_infos().size()) {
    return InvalidArgument(view.Describe() + ": the executor gave " +
                           std::to_string(shapes.size()) + " input shapes for " +
                           std::to_string(view.input_infos().size()) +
                           " inputs; give one per node input, absent ones marked absent");
  }
  const NodeRef node{&view.graph(), view.id()};
  if (KernelRef hit = LookUpHit(node, shapes, binding)) return hit;

  std::lock_guard miss_lock(miss_mutex_);
  // Another thread may have made it while this one waited.
  if (KernelRef hit = LookUpHit(node, shapes, binding)) return hit;
  // Every counter the publication moves is checked before any plugin work,
  // so an exhausted one costs nothing and changes nothing.
  const auto next_misses = CheckedAdd<uint64_t>(misses_.load(std::memory_order_relaxed), 1);
  if (!next_misses) {
    return Internal(view.Describe() +
                    ": the kernel cache's miss counter is exhausted, so no new kernel can be "
                    "published without wrapping the readiness epoch; recreate the session");
  }
  NXRT_ASSIGN_OR_RETURN(const uint64_t next_epoch, readiness_.CheckedNextEpoch());
  // Only misses change nodes_, and this thread holds the miss lock.
  auto found = nodes_.find(node);
  const NodeVariants* siblings = found == nodes_.end() ? nullptr : &found->second;
  const auto displaced = [&](bool serves_other_shapes) -> Result<size_t> {
    const size_t count =
        siblings == nullptr
            ? 0
            : Displaced(siblings->variants, shapes, serves_other_shapes, variants_per_node_).size();
    if (!CheckedAdd<uint64_t>(evictions_.load(std::memory_order_relaxed), count)) {
      return Internal(view.Describe() +
                      ": the kernel cache's eviction counter is exhausted; recreate the session");
    }
    return count;
  };
  // What the bound alone evicts is known before the plugin works; a kernel
  // that serves other shapes may displace more, checked once it says so.
  NXRT_RETURN_IF_ERROR(displaced(false).status());

  NXRT_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, MakeKernel(request, siblings));
  const bool serves_other_shapes = kernel->serves_other_shapes();
  NXRT_ASSIGN_OR_RETURN(const size_t surplus, displaced(serves_other_shapes));
  // Asked now, while no other thread can be running the new kernel.
  SharedConstantState offered;
  if (siblings == nullptr || !siblings->shared_constants) {
    offered = kernel->ShareableConstantState();
  }
  if (surplus > 0) {
    std::vector<const void*> victims;
    for (size_t index :
         Displaced(siblings->variants, shapes, serves_other_shapes, variants_per_node_)) {
      victims.push_back(siblings->variants[index]->kernel.get());
    }
    Status reset = device_graphs_.ResetCapturesOf(victims);
    if (!reset.ok()) {
      return reset.WithContext(view.Describe() +
                               ": resetting the device graphs before evicting a kernel variant");
    }
  }
  KernelRef published(std::move(kernel));
  std::vector<KernelRef> evicted = Publish(node, shapes, published, serves_other_shapes,
                                           std::move(offered), *next_misses, next_epoch, binding);
  // The evicted kernels die here, outside the writer lock, unless another
  // thread still holds one.
  evicted.clear();
  return published;
}

Result<std::unique_ptr<Kernel>> KernelCache::MakeKernel(const KernelRequest& request,
                                                        const NodeVariants* siblings) {
  const NodeView& view = *request.node;
  const std::span<const InputShape> shapes = request.input_shapes;
  plugin_host::ExecutionProvider& provider = *request.provider;

  std::vector<std::vector<nxrt_dim>> dims;
  const std::vector<nxrt_value_info> infos = ConcreteInfos(view, shapes, dims);
  const std::vector<nxrt_layout> layouts(infos.size(), NXRT_LAYOUT_CONTIGUOUS);
  NXRT_ASSIGN_OR_RETURN(const plugin_host::ClaimDecision decision,
                        provider.Claim(view, request.opset, infos, layouts));
  if (!decision.claimed) {
    return DeclinedError(view, request.opset, shapes, provider, decision.reason);
  }

  NXRT_ASSIGN_OR_RETURN(const std::vector<nxrt_constant_input> constants,
                        ResolveKernelConstantInputs(view.graph(), view.id(), view.node(), shapes));
  const std::vector<nxrt_shape> abi_shapes = AbiShapes(view, shapes);
  NXRT_ASSIGN_OR_RETURN(
      std::unique_ptr<Kernel> kernel,
      provider.CreateKernel(request.artifact, request.node, abi_shapes, request.opset));

  kernel->RetainConstantBytes(view.graph().weights);

  const size_t input_count = view.input_infos().size();
  const auto flags = std::make_unique<bool[]>(input_count);
  for (size_t i = 0; i < input_count; ++i) flags[i] = view.input_is_constant(i);
  kernel->SetConstantInputs(std::span<const bool>(flags.get(), input_count));

  bool adopted = false;
  if (siblings != nullptr && siblings->shared_constants) {
    NXRT_ASSIGN_OR_RETURN(adopted, kernel->AdoptShareableConstantState(siblings->shared_constants));
  }
  if (!adopted) {
    NXRT_RETURN_IF_ERROR(kernel->PrepareConstantInputs(constants));
    // An adopting kernel shares what its sibling measures, which is armed.
    if (telemetry_request_) {
      NXRT_RETURN_IF_ERROR(kernel->TelemetryArm(*telemetry_request_).status());
    }
  }
  kernel->SetCaptureSeqIndependent(request.capture_seq_independent);
  return kernel;
}

std::vector<KernelRef> KernelCache::Publish(const NodeRef& node, std::span<const InputShape> shapes,
                                            KernelRef kernel, bool serves_other_shapes,
                                            SharedConstantState offered, uint64_t next_misses,
                                            uint64_t next_epoch, PreBinding& binding) {
  auto entry = std::make_unique<Entry>();
  entry->key.node = node;
  entry->key.inputs.assign(shapes.begin(), shapes.end());
  entry->kernel = std::move(kernel);
  entry->serves_other_shapes = serves_other_shapes;

  std::unique_lock lock(entries_mutex_);
  NodeVariants& variants = nodes_[node];
  std::vector<size_t> victims =
      Displaced(variants.variants, shapes, serves_other_shapes, variants_per_node_);
  std::vector<KernelRef> evicted;
  evicted.reserve(victims.size());
  size_t general_evicted = 0;
  std::sort(victims.begin(), victims.end());
  for (size_t v = victims.size(); v-- > 0;) {
    auto victim = variants.variants.begin() + static_cast<std::ptrdiff_t>(victims[v]);
    general_evicted += (*victim)->serves_other_shapes ? 1 : 0;
    evicted.push_back(std::move((*victim)->kernel));
    variants.variants.erase(victim);
    erasures_.fetch_add(1, std::memory_order_relaxed);
  }
  entry->last_used.store(Tick(), std::memory_order_relaxed);
  if (!variants.shared_constants && offered) variants.shared_constants = std::move(offered);
  variants.variants.push_back(std::move(entry));
  misses_.store(next_misses, std::memory_order_relaxed);
  readiness_.AdvanceTo(next_epoch);
  binding.Bind(node, shapes, this, variants.variants.back().get(),
               erasures_.load(std::memory_order_relaxed));
  entries_.fetch_add(1, std::memory_order_relaxed);
  entries_.fetch_sub(victims.size(), std::memory_order_relaxed);
  shape_general_entries_.fetch_add(serves_other_shapes ? 1 : 0, std::memory_order_relaxed);
  shape_general_entries_.fetch_sub(general_evicted, std::memory_order_relaxed);
  evictions_.fetch_add(victims.size(), std::memory_order_relaxed);
  return evicted;
}

CacheStats KernelCache::stats() const {
  return CacheStats{entries_.load(std::memory_order_relaxed),
                    hits_.load(std::memory_order_relaxed),
                    misses_.load(std::memory_order_relaxed),
                    prebind_hits_.load(std::memory_order_relaxed),
                    evictions_.load(std::memory_order_relaxed),
                    shape_general_entries_.load(std::memory_order_relaxed)};
}

std::vector<Kernel*> KernelCache::TelemetryKernels() const {
  std::shared_lock lock(entries_mutex_);
  std::vector<Kernel*> kernels;
  kernels.reserve(nodes_.size());
  for (const auto& [node, variants] : nodes_) {
    if (!variants.variants.empty()) kernels.push_back(variants.variants.front()->kernel.get());
  }
  return kernels;
}

Result<size_t> KernelCache::ArmTelemetry(uint32_t request_id) {
  std::lock_guard lock(miss_mutex_);
  const std::vector<Kernel*> kernels = TelemetryKernels();
  size_t armed = 0;
  for (Kernel* kernel : kernels) {
    Result<bool> answer = kernel->TelemetryArm(request_id);
    if (!answer.ok()) {
      // Leave no node half armed: disarm them all, the failed one too.
      for (Kernel* armed_kernel : kernels) {
        Status disarmed = armed_kernel->TelemetryDisarm();
        if (!disarmed.ok()) GetLogger()->warn("{}", disarmed.message());
      }
      telemetry_request_.reset();
      return answer.status();
    }
    if (*answer) ++armed;
  }
  telemetry_request_ = armed != 0 ? std::optional<uint32_t>(request_id) : std::nullopt;
  return armed;
}

Status KernelCache::ResetTelemetry() {
  std::lock_guard lock(miss_mutex_);
  for (Kernel* kernel : TelemetryKernels()) NXRT_RETURN_IF_ERROR(kernel->TelemetryReset());
  return Status::Ok();
}

Result<TelemetryTotals> KernelCache::SnapshotTelemetry() {
  std::lock_guard lock(miss_mutex_);
  TelemetrySum sum;
  for (Kernel* kernel : TelemetryKernels()) {
    NXRT_ASSIGN_OR_RETURN(const std::optional<nxrt_telemetry> snapshot,
                          kernel->TelemetrySnapshot());
    if (snapshot) NXRT_RETURN_IF_ERROR(sum.Add(*snapshot));
  }
  return sum.Totals();
}

Status KernelCache::DisarmTelemetry() {
  std::lock_guard lock(miss_mutex_);
  for (Kernel* kernel : TelemetryKernels()) NXRT_RETURN_IF_ERROR(kernel->TelemetryDisarm());
  telemetry_request_.reset();
  return Status::Ok();
}

}  // namespace nxrt::kernel_cache
