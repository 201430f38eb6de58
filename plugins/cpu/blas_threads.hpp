// OpenBLAS's thread count is one setting for the whole process, while each
// CPU EP instance asks for its own `threads`. A BlasThreadLease records one
// instance's request for as long as the instance lives; OpenBLAS runs with
// the largest request among the live leases.
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

class BlasThreadLease {
 public:
  // `threads` must be positive.
  explicit BlasThreadLease(int threads);
  ~BlasThreadLease();

  BlasThreadLease(const BlasThreadLease&) = delete;
  BlasThreadLease& operator=(const BlasThreadLease&) = delete;

 private:
  int threads_;
};

}  // namespace nxrt::cpu
