#include "test_cases/case_discovery.hpp"

#include <algorithm>

namespace nxrt::cli {
namespace {

void CollectCases(const std::filesystem::path& folder, std::vector<std::filesystem::path>& cases) {
  std::error_code error;
  if (std::filesystem::is_regular_file(folder / "model.onnx", error)) {
    cases.push_back(folder);
    return;
  }
  std::vector<std::filesystem::path> children;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    if (entry.is_directory(error)) children.push_back(entry.path());
  }
  std::sort(children.begin(), children.end());
  for (const auto& child : children) CollectCases(child, cases);
}

}  // namespace

Result<std::vector<std::filesystem::path>> FindTestCases(
    const std::vector<std::filesystem::path>& roots) {
  std::vector<std::filesystem::path> cases;
  for (const auto& root : roots) {
    std::error_code error;
    if (!std::filesystem::is_directory(root, error)) {
      return NotFound("test case folder '" + root.string() +
                      "' not found; pass a folder holding model.onnx and test_data_set_N, or a "
                      "folder of such folders");
    }
    const size_t before = cases.size();
    CollectCases(root, cases);
    if (cases.size() == before) {
      return NotFound("no test case under '" + root.string() +
                      "': no folder there holds a model.onnx");
    }
  }
  return cases;
}

}  // namespace nxrt::cli
