// Memory for a model's larger initializers on transparent huge pages. EPs
// read weights in place (ABI 1.2 bytes_persist), and a decode step streams
// every weight once: on 4 KiB pages each page costs a TLB miss and stops the
// hardware prefetcher at its boundary, which slows the single-row products of
// a decoder (a few percent on decoder_2l_h512's decode step here).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace nxrt::graph {

class HugePageArena {
 public:
  HugePageArena() = default;
  HugePageArena(const HugePageArena&) = delete;
  HugePageArena& operator=(const HugePageArena&) = delete;

  // `bytes` bytes, 64-byte aligned, valid until the arena is destroyed.
  // Throws std::bad_alloc when memory runs out.
  std::span<std::byte> Allocate(size_t bytes);

 private:
  struct Free {
    void operator()(std::byte* base) const;
  };
  struct Chunk {
    std::unique_ptr<std::byte, Free> base;
    size_t size = 0;
    size_t used = 0;
  };
  std::vector<Chunk> chunks_;  // the last one is being filled
};

}  // namespace nxrt::graph
