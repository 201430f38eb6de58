#include "run_options_object.hpp"

#include <chrono>
#include <string>

#include "errors.hpp"
#include "nxrt/environment.hpp"

namespace nxrt::python {

RunOptions RunOptionsObject::ForRun(RunProfile* profile) const {
  RunOptions options;
  options.terminate = &terminate;
  options.profile = profile;
  if (deadline) {
    const std::chrono::duration<double> since_epoch(*deadline);
    options.deadline = std::chrono::steady_clock::time_point(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(since_epoch));
  }
  if (log_severity_level) {
    ThrowIfError(Environment::SetLogLevel(LogLevelOfSeverity(*log_severity_level)));
  }
  return options;
}

const char* LogLevelOfSeverity(int severity) {
  static constexpr const char* kLevels[] = {"trace", "info", "warn", "error", "off"};
  if (severity < 0 || severity > 4) {
    RaiseInvalidArgument("log_severity_level " + std::to_string(severity) +
                         " is not one of 0 (verbose), 1 (info), 2 (warning), 3 (error), "
                         "4 (fatal)");
  }
  return kLevels[severity];
}

}  // namespace nxrt::python
