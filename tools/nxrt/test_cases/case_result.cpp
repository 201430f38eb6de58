#include "test_cases/case_result.hpp"

namespace nxrt::cli {

const char* CaseStatusName(CaseStatus status) {
  switch (status) {
    case CaseStatus::kPass:
      return "pass";
    case CaseStatus::kFail:
      return "fail";
    case CaseStatus::kError:
      return "error";
    case CaseStatus::kSkip:
      return "skip";
  }
  return "error";
}

}  // namespace nxrt::cli
