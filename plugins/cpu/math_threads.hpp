// oneDNN follows the calling thread's OpenMP thread count, a per-process
// setting in effect, while each CPU EP instance asks for its own `threads`.
// A MathThreadLease records one instance's request for as long as the
// instance lives; oneDNN runs with the largest request among the live leases
// (the runner applies it before each execution).
//
// OpenBLAS runs on the calling thread whatever the requests: OpenMP's
// threads are the EP's one pool, and OpenBLAS's own would be a second one
// whose idle workers spin beside OpenMP's, besides handing each call over
// through a locked queue that costs more than the decode-sized products
// nxrt gives it. The first lease shuts that pool down: the workers OpenBLAS
// starts when it loads spin on sched_yield for a while before they sleep,
// which on a machine with few cores slows the thread doing the work for the
// first tenth of a second or so, exactly when a short run is measured.
#pragma once

namespace nxrt::cpu {

class MathThreadLease {
 public:
  // `threads` must be positive.
  explicit MathThreadLease(int threads);
  ~MathThreadLease();

  MathThreadLease(const MathThreadLease&) = delete;
  MathThreadLease& operator=(const MathThreadLease&) = delete;

 private:
  int threads_;
};

// oneDNN's thread count in force: the largest live request, 1 when there is
// none.
int MathThreads();

}  // namespace nxrt::cpu
