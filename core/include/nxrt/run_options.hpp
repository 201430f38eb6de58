// RunOptions: controls of one Session::Run. A run checks them before it
// dispatches each node (of the graph and of every If, Loop and Scan body it
// runs) and before it replays each captured segment, so it stops between
// kernels, never inside one. A stopped run fails with StatusCode::kCancelled
// naming the node it stopped before; its outputs are not written, and the
// session runs the next call as usual. A run can also be profiled
// (run_profile.hpp).
#pragma once

#include <atomic>
#include <chrono>
#include <optional>

#include "nxrt/run_profile.hpp"

namespace nxrt {

struct RunOptions {
  // Another thread sets it to stop the run. Borrowed: must outlive the run;
  // null for none. Reset it before reusing it for another run.
  const std::atomic<bool>* terminate = nullptr;
  // The run stops once steady_clock passes it; unset for none. Reading the
  // clock costs about 20 ns a node, so leave it unset on hot paths.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Receives one event per step the run dispatches. Borrowed: must outlive
  // the run; null for none.
  RunProfile* profile = nullptr;
};

}  // namespace nxrt
