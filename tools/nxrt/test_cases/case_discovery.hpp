// Finding backend test cases: a folder holding model.onnx is one case; any
// other folder is searched below for cases, in name order.
#pragma once

#include <filesystem>
#include <vector>

#include "nxrt/support/status.hpp"

namespace nxrt::cli {

// The cases under each of `roots`, in the order given. Fails for a root
// that is not a folder or holds no case.
Result<std::vector<std::filesystem::path>> FindTestCases(
    const std::vector<std::filesystem::path>& roots);

}  // namespace nxrt::cli
