// The math libraries' thread counts are process-wide settings (OpenBLAS has
// one per process; oneDNN follows the calling thread's OpenMP count, which the
// runner sets from here), while each CPU EP instance asks for its own
// `threads`. A MathThreadLease records one instance's request for as long as
// the instance lives; both libraries run with the largest request among the
// live leases.
//
// While every request so far has been for one thread, the OpenBLAS worker
// pool is shut down rather than left idle: the workers OpenBLAS starts when
// it loads spin on sched_yield for a while before they sleep, which on a
// machine with few cores (or with SMT siblings) slows the thread doing the
// work for the first tenth of a second or so, exactly when a short generate
// or bench run is measured. A lease asking for more threads restarts the
// pool, and from then on it stays: shutting it down again could pull it from
// under another instance's call in flight.
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

// The thread count in force: the largest live request, 1 when there is none.
int MathThreads();

}  // namespace nxrt::cpu
