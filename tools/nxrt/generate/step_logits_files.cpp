#include "generate/step_logits_files.hpp"

#include <cstdio>

#include "common/test_value_conversion.hpp"
#include "nxrt/graph/test_data.hpp"
#include "nxrt/tensor.hpp"

namespace nxrt::cli {

Status PrepareStepLogitsFolder(const std::filesystem::path& folder) {
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) return InvalidArgument("--output-dir " + folder.string() + ": " + error.message());
  return Status::Ok();
}

Status WriteStepLogits(const std::filesystem::path& folder, int64_t run,
                       std::span<const float> logits) {
  NXRT_ASSIGN_OR_RETURN(const Tensor tensor, Tensor::FromValues<float>(
                                                 {1, static_cast<int64_t>(logits.size())}, logits));
  char name[32];
  std::snprintf(name, sizeof name, "step_%03lld.pb", static_cast<long long>(run));
  return graph::WriteTensorProtoFile(folder / name, TestTensorFromTensor(tensor, "logits"));
}

}  // namespace nxrt::cli
