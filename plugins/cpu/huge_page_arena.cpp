#include "huge_page_arena.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <new>

namespace nxrt::cpu {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
// Several weight matrices share a chunk, so matrices under 2 MiB get huge pages too.
constexpr size_t kChunkBytes = 8 * kHugePage;
constexpr size_t kBlockAlign = 64;

size_t RoundUp(size_t value, size_t to) {
  return (value + to - 1) / to * to;
}

struct Chunk {
  explicit Chunk(size_t bytes) : size(RoundUp(std::max(bytes, kChunkBytes), kHugePage)) {
    base = static_cast<char*>(std::aligned_alloc(kHugePage, size));
    if (base == nullptr) throw std::bad_alloc();
    // Advisory: where THP is off the chunk stays on ordinary pages.
    madvise(base, size, MADV_HUGEPAGE);
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

}  // namespace

std::shared_ptr<void> AllocateOnHugePages(size_t bytes) {
  bytes = RoundUp(std::max<size_t>(bytes, 1), kBlockAlign);
  std::lock_guard lock(chunk_mutex);
  std::shared_ptr<Chunk> chunk = open_chunk.lock();
  if (!chunk || chunk->size - chunk->used < bytes) {
    chunk = std::make_shared<Chunk>(bytes);
    open_chunk = chunk;
  }
  void* block = chunk->base + chunk->used;
  chunk->used += bytes;
  return std::shared_ptr<void>(std::move(chunk), block);
}

}  // namespace nxrt::cpu
