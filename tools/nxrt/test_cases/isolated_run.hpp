// Runs a test case in a forked child process with a time limit, so a plugin
// that crashes, aborts or hangs on one case costs that case an ERROR line
// instead of the whole run. The child sends its verdict back through a pipe;
// a child that dies first, or outlives the limit (and is killed), is
// reported as an error saying so. The parent stays single-threaded and
// loads no plugin, so every fork starts from a clean process.
#pragma once

#include <functional>

#include "test_cases/case_result.hpp"

namespace nxrt::cli {

CaseResult RunIsolated(const std::function<CaseResult()>& run_case, double timeout_seconds);

}  // namespace nxrt::cli
