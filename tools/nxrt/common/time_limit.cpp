#include "common/time_limit.hpp"

#include <string>

#include "common/option_checks.hpp"

namespace nxrt::cli {

void AddTimeLimitOption(CLI::App& command, double& seconds) {
  command
      .add_option("--time-limit", seconds,
                  "seconds a run may take; it stops between nodes once they pass "
                  "(default: no limit)")
      ->check(ZeroOrMore("seconds", "SECONDS"));
}

std::optional<std::chrono::steady_clock::time_point> RunDeadline(double seconds) {
  if (!(seconds > 0)) return std::nullopt;
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(seconds));
}

Status WithTimeLimitAdvice(Status status) {
  if (status.code() != StatusCode::kCancelled) return status;
  return Status(StatusCode::kCancelled, status.message() + "; raise --time-limit");
}

}  // namespace nxrt::cli
