#include "test_cases/case_runner.hpp"

#include <chrono>

#include <algorithm>
#include <string>

#include "common/model_session.hpp"
#include "common/test_value_conversion.hpp"
#include "common/time_limit.hpp"
#include "nxrt/graph/test_data.hpp"

namespace nxrt::cli {
namespace {

namespace fs = std::filesystem;

// The files named PREFIX_K.pb in `folder`, by K; a gap ends the list.
std::vector<fs::path> NumberedFiles(const fs::path& folder, const std::string& prefix) {
  std::vector<fs::path> files;
  std::error_code error;
  for (size_t k = 0;; ++k) {
    fs::path file = folder / (prefix + "_" + std::to_string(k) + ".pb");
    if (!fs::is_regular_file(file, error)) break;
    files.push_back(std::move(file));
  }
  return files;
}

std::vector<fs::path> DataSets(const fs::path& case_dir) {
  std::vector<fs::path> sets;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(case_dir, error)) {
    if (entry.is_directory(error) &&
        entry.path().filename().string().starts_with("test_data_set_")) {
      sets.push_back(entry.path());
    }
  }
  std::sort(sets.begin(), sets.end());
  return sets;
}

CaseResult Error(const std::string& message) {
  return {CaseStatus::kError, message};
}

// Older onnx releases wrote bfloat16 test data as uint16 tensors of the same
// bits; such a file for a value the model declares bfloat16 is read as that.
void ReadOldBfloat16AsDeclared(graph::TestValue& value, DataType declared) {
  if (declared != DataType::kBfloat16) return;
  if (value.tensor.dtype == DataType::kUint16) value.tensor.dtype = DataType::kBfloat16;
  for (graph::TestTensor& element : value.sequence) {
    if (element.dtype == DataType::kUint16) element.dtype = DataType::kBfloat16;
  }
}

// Runs one data set; a pass when every expected output matches.
CaseResult RunDataSet(const fs::path& data_set, ModelSession& model, const CaseSettings& settings) {
  const std::string set_name = data_set.filename().string();
  const std::vector<ValueDescription>& inputs = model.session->inputs();
  const std::vector<ValueDescription>& outputs = model.session->outputs();
  const std::vector<fs::path> input_files = NumberedFiles(data_set, "input");
  const std::vector<fs::path> output_files = NumberedFiles(data_set, "output");
  if (input_files.size() > inputs.size()) {
    return Error(set_name + " has " + std::to_string(input_files.size()) +
                 " input files but the model declares " + std::to_string(inputs.size()) +
                 " inputs");
  }
  if (output_files.size() > outputs.size()) {
    return Error(set_name + " has " + std::to_string(output_files.size()) +
                 " output files but the model declares " + std::to_string(outputs.size()) +
                 " outputs");
  }
  std::vector<NamedValue> feeds;
  for (size_t k = 0; k < input_files.size(); ++k) {
    Result<graph::TestValue> decoded =
        graph::ReadTestValueFile(input_files[k], graph::TestProtoKindFor(model.input_kinds[k]));
    if (!decoded.ok()) return Error(decoded.status().message());
    ReadOldBfloat16AsDeclared(*decoded, inputs[k].dtype);
    Result<Value> value = ValueFromTestValue(*decoded);
    if (!value.ok()) return Error(input_files[k].string() + ": " + value.status().message());
    feeds.push_back({inputs[k].name, std::move(value).value()});
  }
  std::vector<graph::TestValue> expected;
  std::vector<std::string> wanted;
  for (size_t k = 0; k < output_files.size(); ++k) {
    Result<graph::TestValue> decoded =
        graph::ReadTestValueFile(output_files[k], graph::TestProtoKindFor(model.output_kinds[k]));
    if (!decoded.ok()) return Error(decoded.status().message());
    ReadOldBfloat16AsDeclared(*decoded, outputs[k].dtype);
    expected.push_back(std::move(decoded).value());
    wanted.push_back(outputs[k].name);
  }
  RunOptions run_options;
  run_options.deadline = RunDeadline(settings.run_time_limit_s);
  Result<std::vector<Value>> actual = model.session->RunValues(feeds, wanted, run_options);
  if (!actual.ok() && actual.status().code() == StatusCode::kCancelled) {
    return Error(actual.status().message() + "; raise --timeout if the case is only slow");
  }
  if (!actual.ok()) return Error(actual.status().message());
  for (size_t k = 0; k < expected.size(); ++k) {
    const std::string why = CompareValue((*actual)[k], expected[k], settings.tolerance);
    if (!why.empty()) {
      return {CaseStatus::kFail, "output '" + wanted[k] + "' (" + set_name + "/output_" +
                                     std::to_string(k) + ".pb): " + why};
    }
  }
  return {CaseStatus::kPass, ""};
}

}  // namespace

CaseResult RunTestCase(const fs::path& case_dir, const CaseSettings& settings,
                       std::shared_ptr<Environment> environment) {
  const std::vector<fs::path> data_sets = DataSets(case_dir);
  if (data_sets.empty()) return {CaseStatus::kSkip, "no test_data_set_N folder"};
  SessionOptions options;
  options.providers = settings.providers;
  options.memory_limit_bytes = settings.memory_limit_bytes;
  Result<ModelSession> model =
      LoadModelSession(std::move(environment), case_dir / "model.onnx", std::move(options));
  if (!model.ok()) return Error(model.status().message());
  for (const fs::path& data_set : data_sets) {
    CaseResult result = RunDataSet(data_set, *model, settings);
    if (result.status != CaseStatus::kPass) return result;
  }
  return {CaseStatus::kPass, ""};
}

}  // namespace nxrt::cli
