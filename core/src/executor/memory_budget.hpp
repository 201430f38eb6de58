// The bytes of value buffers one session may hold at once
// (SessionOptions::memory_limit_bytes), shared by its executors and those
// of their bodies. A model that asks for more (a window of 2^31 samples, an
// Expand to a billion rows) is refused with a status naming the limit,
// before the memory is touched, rather than run into the machine's swap or
// its out-of-memory killer. Runs of a session are serialised, so the count
// needs no lock.
#pragma once

#include <cstddef>

#include "nxrt/support/status.hpp"

namespace nxrt::executor {

class MemoryBudget {
 public:
  // 0: no limit.
  void set_limit(size_t bytes) { limit_ = bytes; }
  size_t limit() const { return limit_; }
  size_t held() const { return held_; }

  bool Fits(size_t bytes) const { return limit_ == 0 || bytes <= limit_ - held_; }
  // Counts `bytes` as held when they fit; else kOutOfMemory, saying what
  // was asked, what is held and the limit, and how to raise it.
  Status Take(size_t bytes);
  void Give(size_t bytes) { held_ -= bytes; }

 private:
  size_t limit_ = 0;
  size_t held_ = 0;
};

}  // namespace nxrt::executor
