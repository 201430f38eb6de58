#include "math_threads.hpp"

#include <cblas.h>

#include <atomic>
#include <map>
#include <mutex>

// Exported by the pthread build of OpenBLAS and absent from others; weak so
// that a build without a worker pool simply has nothing to shut down.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));

namespace nxrt::cpu {
namespace {

struct Leases {
  std::mutex mutex;
  std::map<int, int> live_by_threads;  // requested threads -> live leases
  bool blas_pool_shut = false;
};

// Read without the mutex on every oneDNN execution.
std::atomic<int> threads_in_force{1};

Leases& AllLeases() {
  static Leases leases;
  return leases;
}

// Applies the largest live request; the caller holds the mutex.
void Apply(Leases& leases) {
  const int wanted = leases.live_by_threads.empty() ? 1 : leases.live_by_threads.rbegin()->first;
  threads_in_force.store(wanted, std::memory_order_relaxed);
}

}  // namespace

MathThreadLease::MathThreadLease(int threads) : threads_(threads) {
  Leases& leases = AllLeases();
  std::lock_guard lock(leases.mutex);
  if (!leases.blas_pool_shut) {
    openblas_set_num_threads(1);
    if (blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
    leases.blas_pool_shut = true;
  }
  ++leases.live_by_threads[threads_];
  Apply(leases);
}

MathThreadLease::~MathThreadLease() {
  Leases& leases = AllLeases();
  std::lock_guard lock(leases.mutex);
  auto it = leases.live_by_threads.find(threads_);
  if (--it->second == 0) leases.live_by_threads.erase(it);
  Apply(leases);
}

int MathThreads() {
  return threads_in_force.load(std::memory_order_relaxed);
}

}  // namespace nxrt::cpu
