#include "kernel_cache/pre_binding.hpp"

namespace nxrt::kernel_cache {

void PreBinding::Bind(NodeRef node, std::span<const InputShape> shapes, const KernelCache* cache,
                      CacheEntry* entry, uint64_t erasures) {
  key_.node = node;
  key_.inputs.resize(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    key_.inputs[i].dims.assign(shapes[i].dims.begin(), shapes[i].dims.end());
    key_.inputs[i].absent = shapes[i].absent;
  }
  bound_ = true;
  cache_ = cache;
  entry_ = entry;
  erasures_ = erasures;
}

}  // namespace nxrt::kernel_cache
