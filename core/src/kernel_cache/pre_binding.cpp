#include "kernel_cache/pre_binding.hpp"

namespace nxrt::kernel_cache {
namespace {

int64_t Head(const InputShape& shape) {
  const auto rank = static_cast<int64_t>(shape.dims.size());
  return shape.absent ? -1 - rank : rank;
}

}  // namespace

bool PreBinding::Matches(std::span<const InputShape> shapes) const {
  if (!bound_ || shapes.size() != key_.inputs.size()) return false;
  // Each head fixes its rank, so the reads stay inside flat_.
  size_t at = 0;
  for (const InputShape& shape : shapes) {
    if (flat_[at++] != Head(shape)) return false;
    for (int64_t extent : shape.dims) {
      if (flat_[at++] != extent) return false;
    }
  }
  return true;
}

void PreBinding::Bind(NodeRef node, std::span<const InputShape> shapes, const KernelCache* cache,
                      CacheEntry* entry, uint64_t erasures) {
  key_.node = node;
  key_.inputs.resize(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    key_.inputs[i].dims.assign(shapes[i].dims.begin(), shapes[i].dims.end());
    key_.inputs[i].absent = shapes[i].absent;
  }
  flat_.clear();
  for (const InputShape& shape : shapes) {
    flat_.push_back(Head(shape));
    flat_.insert(flat_.end(), shape.dims.begin(), shape.dims.end());
  }
  bound_ = true;
  cache_ = cache;
  entry_ = entry;
  erasures_ = erasures;
}

}  // namespace nxrt::kernel_cache
