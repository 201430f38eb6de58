#include "parallel_blocks.hpp"

#include <omp.h>

#include <atomic>
#include <exception>

namespace nxrt::cpu {
namespace {

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// One job's generation << 32 | its blocks << 16 | the blocks claimed so far:
// one word, so a claim never counts against a job other than the one seen.
uint64_t Claims(uint32_t generation, uint64_t blocks, uint64_t claimed) {
  return uint64_t{generation} << 32 | blocks << 16 | claimed;
}

class Crew {
 public:
  // The owner's side: runs one job with whichever members are free.
  void Run(int blocks, detail::BlockFunction function, const void* context) {
    function_ = function;
    context_ = context;
    finished_.store(0, std::memory_order_relaxed);
    const uint32_t generation = generation_.load(std::memory_order_relaxed) + 1;
    claims_.store(Claims(generation, blocks, 0), std::memory_order_release);
    generation_.store(generation, std::memory_order_release);
    Claim(generation);
    while (finished_.load(std::memory_order_acquire) != blocks) CpuRelax();
  }

  // A member's side: takes blocks of each job until dismissed.
  void Serve() {
    uint32_t seen = 0;
    for (;;) {
      uint32_t now = generation_.load(std::memory_order_acquire);
      while (now == seen) {
        if (dismissed_.load(std::memory_order_acquire)) return;
        CpuRelax();
        now = generation_.load(std::memory_order_acquire);
      }
      seen = now;
      Claim(now);
    }
  }

  void Dismiss() { dismissed_.store(true, std::memory_order_release); }

  bool nested = false;  // the owner's: a oneDNN execution ran inside

 private:
  // Claims and runs blocks of job `generation` until none is left.
  void Claim(uint32_t generation) {
    uint64_t claims = claims_.load(std::memory_order_acquire);
    for (;;) {
      if (claims >> 32 != generation) return;
      const uint64_t blocks = claims >> 16 & 0xffff;
      const uint64_t block = claims & 0xffff;
      if (block >= blocks) return;
      if (!claims_.compare_exchange_weak(claims, claims + 1, std::memory_order_acquire)) continue;
      function_(context_, static_cast<int>(block));
      finished_.fetch_add(1, std::memory_order_release);
      claims = claims_.load(std::memory_order_acquire);
    }
  }

  // The job, stored by the owner before it publishes the job in claims_,
  // and read by a member only once it has claimed a block of that job, so
  // never while the next job's is being stored.
  detail::BlockFunction function_ = nullptr;
  const void* context_ = nullptr;
  std::atomic<uint32_t> generation_{0};
  std::atomic<uint64_t> claims_{0};
  std::atomic<int> finished_{0};
  std::atomic<bool> dismissed_{false};
};

// The crew of the replay this thread runs, if any.
thread_local Crew* current_crew = nullptr;

}  // namespace

namespace detail {

void RunBlocks(int blocks, BlockFunction function, const void* context) {
  if (blocks > 1 && current_crew != nullptr) {
    current_crew->Run(blocks, function, context);
    return;
  }
  if (blocks <= 1) {
    if (blocks == 1) function(context, 0);
    return;
  }
#pragma omp parallel for schedule(static) num_threads(blocks)
  for (int block = 0; block < blocks; ++block) function(context, block);
}

bool RunWithCrew(int threads, BodyFunction body, void* context) {
  if (threads <= 1 || current_crew != nullptr || omp_in_parallel()) {
    body(context);
    return false;
  }
  Crew crew;
  std::exception_ptr failure;
#pragma omp parallel num_threads(threads)
  {
    if (omp_get_thread_num() == 0) {
      current_crew = &crew;
      try {
        body(context);
      } catch (...) {
        failure = std::current_exception();
      }
      current_crew = nullptr;
      crew.Dismiss();
    } else {
      crew.Serve();
    }
  }
  if (failure) std::rethrow_exception(failure);
  return crew.nested;
}

}  // namespace detail

void NoteNestedParallelism() {
  if (current_crew != nullptr) current_crew->nested = true;
}

}  // namespace nxrt::cpu
