#include "weights/huge_page_arena.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <new>

namespace nxrt::graph {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
// Chunks double from one huge page, so a small model wastes little and a
// large one is carved from few chunks. The first chunk stays on 4 KiB pages:
// a model whose larger tensors fit in one huge page would pay a whole one for
// little gain.
constexpr size_t kLargestChunk = 16 * kHugePage;
constexpr size_t kBlockAlign = 64;

size_t RoundUp(size_t value, size_t to) {
  return (value + to - 1) / to * to;
}

}  // namespace

void HugePageArena::Free::operator()(std::byte* base) const {
  std::free(base);
}

std::span<std::byte> HugePageArena::Allocate(size_t bytes) {
  bytes = RoundUp(std::max<size_t>(bytes, 1), kBlockAlign);
  if (chunks_.empty() || chunks_.back().size - chunks_.back().used < bytes) {
    const size_t next =
        chunks_.empty() ? kHugePage : std::min(2 * chunks_.back().size, kLargestChunk);
    const size_t size = RoundUp(std::max(bytes, next), kHugePage);
    auto* base = static_cast<std::byte*>(std::aligned_alloc(kHugePage, size));
    if (base == nullptr) throw std::bad_alloc();
    // Advisory: where transparent huge pages are off the chunk keeps 4 KiB pages.
    if (size > kHugePage) madvise(base, size, MADV_HUGEPAGE);
    chunks_.push_back(Chunk{std::unique_ptr<std::byte, Free>(base), size, 0});
  }
  Chunk& chunk = chunks_.back();
  std::byte* block = chunk.base.get() + chunk.used;
  chunk.used += bytes;
  return {block, bytes};
}

}  // namespace nxrt::graph
