// The shape-keyed kernel cache: every kernel a session's executor dispatches,
// keyed by node and concrete input shapes.
//
// A hit returns the cached kernel; the pre-bound path (GetPrebound) serves a
// node whose shapes did not change since its last dispatch without building a
// key or allocating. A miss re-checks the EP's claim at the concrete shapes,
// makes the kernel, gives it the constants a sibling variant already
// prepared (or has it prepare them), and publishes it at one place, the only
// place the readiness epoch moves. Each node keeps at most `variants_per_node`
// variants: the least recently used ones are evicted, after the executor
// resets its captured device graphs. A kernel the EP says serves other
// shapes (ABI 1.3) is the node's one variant at its ranks: it displaces the
// variants it stands for, and a new shape of those ranks is a hit on it. A failed miss leaves the
// cache, its counters and the epoch as they were, and destroys the half-made kernel.
//
// Threads: lookups (GetPrebound, HasPrebound, the hit path of GetOrCreate,
// stats) share a reader lock and may run concurrently with each other and
// with the plugin work of a miss. Misses are serialised among themselves;
// a miss holds the writer lock only to insert and evict. Kernels are handed
// out as shared_ptr, so one evicted while another thread still runs it dies
// when that thread lets go. The telemetry calls drive kernels directly, so
// the executor makes them between runs, never while the kernels compute.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "kernel_cache/artifact_readiness.hpp"
#include "kernel_cache/device_graph_resetter.hpp"
#include "kernel_cache/kernel_key.hpp"
#include "kernel_cache/kernel_telemetry.hpp"
#include "kernel_cache/pre_binding.hpp"
#include "kernel_cache/variants_per_node.hpp"
#include "nxrt/support/status.hpp"
#include "plugin_host/execution_provider.hpp"
#include "plugin_host/kernel.hpp"
#include "plugin_host/node_view.hpp"
#include "plugin_host/shared_constant_state.hpp"

namespace nxrt::kernel_cache {

using KernelRef = std::shared_ptr<plugin_host::Kernel>;

// One cached variant of a node's kernel. A variant whose kernel serves other
// shapes is found by its key's ranks alone, and is the node's only variant
// at those ranks.
struct CacheEntry {
  KernelKey key;
  KernelRef kernel;
  bool serves_other_shapes = false;
  std::atomic<uint64_t> last_used{0};

  bool Serves(std::span<const InputShape> shapes) const {
    return serves_other_shapes ? key.MatchesRanks(shapes) : key.MatchesShapes(shapes);
  }
};

// Everything a miss needs to make the kernel of one node.
struct KernelRequest {
  // The node; its graph gives initializer bytes and the model name.
  std::shared_ptr<const plugin_host::NodeView> node;
  // The EP the partitioner assigned the node to; outlives the call.
  plugin_host::ExecutionProvider* provider = nullptr;
  // One per node input, in input order.
  std::span<const InputShape> input_shapes;
  // Opset in force for the node's domain.
  int64_t opset = 0;
  // The capture classifier's verdict for the node.
  bool capture_seq_independent = false;
  plugin_host::ArtifactConfig artifact;
};

// Monotonic counters. Misses and evictions are checked: an exhausted one
// refuses the miss. Hit counts are statistics only and stay at the maximum.
struct CacheCounters {
  uint64_t hits = 0;          // GetOrCreate served from an existing entry
  uint64_t misses = 0;        // kernels made and published
  uint64_t prebind_hits = 0;  // GetPrebound served the executor's binding
  uint64_t evictions = 0;     // variants dropped by the per-node bound
};

struct CacheStats {
  size_t entries = 0;  // kernels held now
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t prebind_hits = 0;
  uint64_t evictions = 0;
  // Of the entries, the kernels that serve every shape of their ranks: each
  // stands for all of its node's shapes there, so a new one is a hit.
  size_t shape_general_entries = 0;

  friend bool operator==(const CacheStats&, const CacheStats&) = default;
};

struct KernelCacheOptions {
  // Sessions pass SessionOptions' value, by default KernelCacheVariantsPerNode().
  size_t variants_per_node = kDefaultKernelVariantsPerNode;
  // Where counting continues from when this cache replaces an earlier one of
  // the same executor, so totals and the epoch never go back.
  CacheCounters counters;
  uint64_t readiness_epoch = 0;
};

class KernelCache {
 public:
  // `device_graphs` is reset before every eviction and must outlive the
  // cache. A variants_per_node of 0 is taken as 1.
  explicit KernelCache(DeviceGraphResetter& device_graphs, KernelCacheOptions options = {});
  ~KernelCache();
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // The kernel `binding` names when its shapes equal `shapes` and it is still
  // cached, else nullptr (the caller then uses GetOrCreate). Counts a
  // pre-bound hit and marks the kernel used; never allocates.
  KernelRef GetPrebound(const PreBinding& binding, std::span<const InputShape> shapes);
  // As GetPrebound, without counting or marking.
  bool HasPrebound(const PreBinding& binding, std::span<const InputShape> shapes) const;

  // Whether the kernel `binding` names is still cached, without comparing
  // shapes or locking: true while the cache has erased nothing since the
  // lookup that bound it. Call only while no other thread can publish
  // (inside a session's serialised run).
  bool StillBound(const PreBinding& binding) const;
  // How many entries the cache has erased so far. A caller that found its
  // kernel StillBound may skip lookups while this count stays put: while it
  // dispatches no other variant of the node, its kernel stays the node's
  // most recently used, so marking it would not change the eviction order.
  // Such a caller counts its hits itself and adds them with
  // AddPreboundHits, once for many nodes.
  uint64_t erasures() const { return erasures_.load(std::memory_order_relaxed); }
  void AddPreboundHits(uint64_t hits);

  // The kernel of `request`'s node at its input shapes, made and published on
  // a miss. On success `binding` names it, for the next GetPrebound.
  Result<KernelRef> GetOrCreate(const KernelRequest& request, PreBinding& binding);

  CacheStats stats() const;
  size_t variants_per_node() const { return variants_per_node_; }
  const ArtifactReadiness& readiness() const { return readiness_; }

  // Telemetry over one kernel per node (the node's oldest cached variant).
  // Arm: how many kernels armed; kernels made later while armed are armed
  // too unless they adopted a sibling's constants. When one kernel fails,
  // every node is disarmed again and the error returned.
  Result<size_t> ArmTelemetry(uint32_t request_id);
  Status ResetTelemetry();
  Result<TelemetryTotals> SnapshotTelemetry();
  Status DisarmTelemetry();

 private:
  using Entry = CacheEntry;
  struct NodeVariants {
    std::vector<std::unique_ptr<Entry>> variants;  // oldest first
    // Prepared constants the node's variants may adopt; taken from a variant
    // before it was published, while no other thread could be running it.
    plugin_host::SharedConstantState shared_constants;
  };
  using NodeMap = std::unordered_map<NodeRef, NodeVariants, NodeRefHash>;

  // Caller holds entries_mutex_ (either mode).
  Entry* Find(const NodeRef& node, std::span<const InputShape> shapes) const;
  // The cached kernel, counted as a hit, marked used and bound; nullptr on a
  // miss.
  KernelRef LookUpHit(const NodeRef& node, std::span<const InputShape> shapes, PreBinding& binding);
  // The entry `binding` was bound from while nothing was erased since, else
  // the one Find gives. Caller holds entries_mutex_ and checked the shapes.
  Entry* PreboundEntry(const PreBinding& binding, std::span<const InputShape> shapes) const;
  uint64_t Tick() { return clock_.fetch_add(1, std::memory_order_relaxed); }
  Result<std::unique_ptr<plugin_host::Kernel>> MakeKernel(const KernelRequest& request,
                                                          const NodeVariants* siblings);
  // The one place a kernel becomes visible, misses and the epoch advance,
  // and surplus variants leave; returns the evicted kernels for the caller to
  // release after the lock. Binds `binding` to the new entry.
  std::vector<KernelRef> Publish(const NodeRef& node, std::span<const InputShape> shapes,
                                 KernelRef kernel, bool serves_other_shapes,
                                 plugin_host::SharedConstantState offered, uint64_t next_misses,
                                 uint64_t next_epoch, PreBinding& binding);
  // The node's oldest variant, for each node; caller holds miss_mutex_.
  std::vector<plugin_host::Kernel*> TelemetryKernels() const;

  DeviceGraphResetter& device_graphs_;
  const size_t variants_per_node_;
  ArtifactReadiness readiness_;

  std::mutex miss_mutex_;                    // serialises misses and telemetry
  mutable std::shared_mutex entries_mutex_;  // readers: lookups; writer: Publish
  NodeMap nodes_;
  // Entries erased so far; written under entries_mutex_, read without it by
  // RefreshPrebound.
  std::atomic<uint64_t> erasures_{0};
  std::optional<uint32_t> telemetry_request_;  // guarded by miss_mutex_

  std::atomic<uint64_t> clock_{1};
  std::atomic<size_t> entries_{0};
  std::atomic<size_t> shape_general_entries_{0};
  std::atomic<uint64_t> hits_;
  std::atomic<uint64_t> misses_;
  std::atomic<uint64_t> prebind_hits_;
  std::atomic<uint64_t> evictions_;
};

}  // namespace nxrt::kernel_cache
