// The verdict on one ONNX backend test case: passed, failed (an output
// differs from the expected one), error (the case could not run: the model
// did not load or partition, a file did not decode, a run failed, the
// process crashed or timed out) or skipped, with the one-line reason.
#pragma once

#include <string>

namespace nxrt::cli {

enum class CaseStatus { kPass, kFail, kError, kSkip };

struct CaseResult {
  CaseStatus status = CaseStatus::kError;
  std::string message;  // empty for a pass
};

// "pass", "fail", "error", "skip": the spelling of the JSON report.
const char* CaseStatusName(CaseStatus status);

}  // namespace nxrt::cli
