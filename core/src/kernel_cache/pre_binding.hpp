// The executor's per-node memory of the kernel it dispatched last.
//
// During steady decoding a node sees the same shapes step after step, so the
// executor keeps the key it last used and asks the cache for that key first
// (KernelCache::GetPrebound), comparing shapes without building a new key.
// Only the cache fills it in; an empty binding never matches. It also keeps
// the cache entry it was bound from, so that while the cache erased nothing
// since, a lookup reaches the kernel without searching.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernel_cache/kernel_key.hpp"

namespace nxrt::kernel_cache {

class KernelCache;
struct CacheEntry;

class PreBinding {
 public:
  bool bound() const { return bound_; }
  // Meaningful only when bound().
  const KernelKey& key() const { return key_; }
  // Whether `shapes` are exactly the key's shapes; never allocates.
  bool Matches(std::span<const InputShape> shapes) const;

 private:
  friend class KernelCache;
  // Copies into the existing storage, so rebinding reuses its capacity.
  // `erasures` is the cache's count of erased entries when `entry` was found.
  void Bind(NodeRef node, std::span<const InputShape> shapes, const KernelCache* cache,
            CacheEntry* entry, uint64_t erasures);

  KernelKey key_;
  // The key's shapes in one run of memory, each input's rank (-1 - rank when
  // absent) then its dims: matching reads one buffer, not one per input.
  std::vector<int64_t> flat_;
  bool bound_ = false;
  const KernelCache* cache_ = nullptr;
  CacheEntry* entry_ = nullptr;
  uint64_t erasures_ = 0;
};

}  // namespace nxrt::kernel_cache
