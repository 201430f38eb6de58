// nxrt.RunOptions: the controls of one run, as ONNX Runtime's RunOptions.
// `terminate` may be set from another thread while a run is going; the run
// stops before its next node and raises nxrt.Cancelled. `deadline` is a
// time on Python's time.monotonic() clock (the C++ steady clock), after
// which the run stops the same way. Reset `terminate` before reusing the
// object.
#pragma once

#include <atomic>
#include <optional>

#include "nxrt/run_options.hpp"
#include "nxrt/session.hpp"

namespace nxrt::python {

struct RunOptionsObject {
  std::atomic<bool> terminate{false};
  std::optional<double> deadline;  // time.monotonic() seconds
  // ONNX Runtime's 0 (verbose) to 4 (fatal); when set, nxrt's loggers take
  // that level as the run starts (for the process, from then on).
  std::optional<int> log_severity_level;
  // The device-graph slot the run replays ("primary" for single-token decode
  // steps, "verify" for speculative verification); unset for an eager run.
  std::optional<DeviceGraphSlot> slot;

  // The options of one run; the result borrows this object's flag. Raises
  // for a bad log level, so call it with the GIL held.
  RunOptions ForRun(RunProfile* profile) const;
};

// ONNX Runtime's severity (0 verbose ... 4 fatal) as an nxrt log level name;
// an out-of-range level is an nxrt.InvalidArgument.
const char* LogLevelOfSeverity(int severity);

}  // namespace nxrt::python
