#include "huge_page_arena.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <new>

namespace nxrt::cpu {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
// Several weight matrices share a chunk, so matrices under 2 MiB get huge
// pages too. Chunks double from one huge page, and the first stays on 4 KiB
// pages: a small model would pay a whole huge page for little gain.
constexpr size_t kLargestChunk = 8 * kHugePage;
constexpr size_t kBlockAlign = 64;

size_t RoundUp(size_t value, size_t to) {
  return (value + to - 1) / to * to;
}

struct Chunk {
  // At least `bytes`, and at least `least` rounded up to whole huge pages.
  Chunk(size_t bytes, size_t least) : size(RoundUp(std::max(bytes, least), kHugePage)) {
    base = static_cast<char*>(std::aligned_alloc(kHugePage, size));
    if (base == nullptr) throw std::bad_alloc();
    // Advisory: where THP is off the chunk stays on ordinary pages.
    if (size > kHugePage) madvise(base, size, MADV_HUGEPAGE);
  }
  ~Chunk() { std::free(base); }
  Chunk(const Chunk&) = delete;
  Chunk& operator=(const Chunk&) = delete;

  char* base = nullptr;
  size_t size = 0;
  size_t used = 0;
};

std::mutex chunk_mutex;
std::weak_ptr<Chunk> open_chunk;
size_t next_chunk_bytes = kHugePage;  // doubles up to kLargestChunk

}  // namespace

std::shared_ptr<void> AllocateOnHugePages(size_t bytes) {
  bytes = RoundUp(std::max<size_t>(bytes, 1), kBlockAlign);
  std::lock_guard lock(chunk_mutex);
  std::shared_ptr<Chunk> chunk = open_chunk.lock();
  if (!chunk || chunk->size - chunk->used < bytes) {
    chunk = std::make_shared<Chunk>(bytes, next_chunk_bytes);
    open_chunk = chunk;
    next_chunk_bytes = std::min(2 * next_chunk_bytes, kLargestChunk);
  }
  void* block = chunk->base + chunk->used;
  chunk->used += bytes;
  return std::shared_ptr<void>(std::move(chunk), block);
}

}  // namespace nxrt::cpu
