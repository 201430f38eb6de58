// The executor's per-node memory of the kernel it dispatched last.
//
// During steady decoding a node sees the same shapes step after step, so the
// executor keeps the key it last used and asks the cache for that key first
// (KernelCache::GetPrebound), comparing shapes without building a new key.
// Only the cache fills it in; an empty binding never matches.
#pragma once

#include <span>

#include "kernel_cache/kernel_key.hpp"

namespace nxrt::kernel_cache {

class PreBinding {
 public:
  bool bound() const { return bound_; }
  // Meaningful only when bound().
  const KernelKey& key() const { return key_; }
  bool Matches(std::span<const InputShape> shapes) const {
    return bound_ && key_.MatchesShapes(shapes);
  }

 private:
  friend class KernelCache;
  // Copies into the existing storage, so rebinding reuses its capacity.
  void Bind(NodeRef node, std::span<const InputShape> shapes);

  KernelKey key_;
  bool bound_ = false;
};

}  // namespace nxrt::kernel_cache
