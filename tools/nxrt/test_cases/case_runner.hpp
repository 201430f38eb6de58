// Runs one ONNX backend test case folder (model.onnx, test_data_set_N/
// input_K.pb and output_K.pb) in its own Session: input_K feeds the K-th
// declared graph input that is not an initializer, output_K is compared with
// the K-th graph output, every data set in turn.
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include "common/value_comparison.hpp"
#include "nxrt/environment.hpp"
#include "nxrt/session_options.hpp"
#include "test_cases/case_result.hpp"

namespace nxrt::cli {

struct CaseSettings {
  std::vector<ExecutionProviderSpec> providers;
  Tolerance tolerance;
  size_t memory_limit_bytes = 0;  // SessionOptions::memory_limit_bytes
  // Seconds each data set's run may take before RunOptions stop it between
  // nodes; 0 for no limit (a child process is killed by its parent instead).
  double run_time_limit_s = 0;
};

CaseResult RunTestCase(const std::filesystem::path& case_dir, const CaseSettings& settings,
                       std::shared_ptr<Environment> environment);

}  // namespace nxrt::cli
