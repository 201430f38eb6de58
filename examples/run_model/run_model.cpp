// run_model: an application embedding nxrt through its C++ API, the shape a
// program that serves an ONNX model takes. It loads MODEL with the execution
// providers named after it (in priority order; the cpu plugin when none),
// says where each node runs, feeds every input a ramp of small whole numbers
// (element i holds i % 7; a symbolic dim is bound to 1), runs the model and
// prints every output's type, dims and first values.
//
//   run_model MODEL [EP...]
//
// Errors come back as nxrt::Status objects whose message names the file, the
// node and what to do; the program prints that one line and exits with 1.
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nxrt/session.hpp"

namespace {

constexpr size_t kValuesShown = 8;

// Dims of a declared input: numbers as given, symbols bound to 1.
std::vector<int64_t> BindDims(const nxrt::ValueDescription& input) {
  std::vector<int64_t> dims;
  for (const std::string& dim : input.shape) {
    const bool numeric = !dim.empty() && dim.find_first_not_of("0123456789") == std::string::npos;
    dims.push_back(numeric ? std::stoll(dim) : 1);
  }
  return dims;
}

template <typename T>
void FillRamp(nxrt::Tensor& tensor) {
  auto values = tensor.mutable_values<T>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<T>(i % 7);
}

nxrt::Result<nxrt::Tensor> RampInput(const nxrt::ValueDescription& input) {
  NXRT_ASSIGN_OR_RETURN(nxrt::Tensor tensor, nxrt::Tensor::Zeros(input.dtype, BindDims(input)));
  switch (input.dtype) {
    case nxrt::DataType::kFloat32:
      FillRamp<float>(tensor);
      break;
    case nxrt::DataType::kFloat64:
      FillRamp<double>(tensor);
      break;
    case nxrt::DataType::kInt32:
      FillRamp<int32_t>(tensor);
      break;
    case nxrt::DataType::kInt64:
      FillRamp<int64_t>(tensor);
      break;
    default:
      return nxrt::Unsupported("input '" + input.name + "' is " +
                               std::string(nxrt::graph::DataTypeName(input.dtype)) +
                               "; run_model fills float32, float64, int32 and int64 inputs only");
  }
  return tensor;
}

template <typename T>
void PrintValues(const nxrt::Tensor& tensor) {
  const auto values = tensor.values<T>();
  for (size_t i = 0; i < values.size() && i < kValuesShown; ++i) {
    std::printf(" %g", static_cast<double>(values[i]));
  }
  if (values.size() > kValuesShown) std::printf(" ...");
}

void PrintTensor(const std::string& name, const nxrt::Tensor& tensor) {
  std::printf("output %s %s [", name.c_str(),
              std::string(nxrt::graph::DataTypeName(tensor.dtype())).c_str());
  for (size_t i = 0; i < tensor.shape().size(); ++i) {
    std::printf("%s%lld", i ? "," : "", static_cast<long long>(tensor.shape()[i]));
  }
  std::printf("]:");
  switch (tensor.dtype()) {
    case nxrt::DataType::kFloat32:
      PrintValues<float>(tensor);
      break;
    case nxrt::DataType::kFloat64:
      PrintValues<double>(tensor);
      break;
    case nxrt::DataType::kInt32:
      PrintValues<int32_t>(tensor);
      break;
    case nxrt::DataType::kInt64:
      PrintValues<int64_t>(tensor);
      break;
    case nxrt::DataType::kBool:
      PrintValues<bool>(tensor);
      break;
    default:
      std::printf(" (values not shown)");
      break;
  }
  std::printf("\n");
}

nxrt::Status RunModel(const std::string& model_path, const std::vector<std::string>& providers) {
  NXRT_ASSIGN_OR_RETURN(std::shared_ptr<nxrt::Environment> environment,
                        nxrt::Environment::Create());
  nxrt::SessionOptions options;
  for (const std::string& provider : providers) options.providers.push_back({provider, {}});
  NXRT_ASSIGN_OR_RETURN(std::unique_ptr<nxrt::Session> session,
                        nxrt::Session::Create(environment, model_path, options));

  std::map<std::string, size_t> nodes_per_provider;
  for (const nxrt::NodePlacement& placement : session->placements()) {
    ++nodes_per_provider[placement.provider];
  }
  for (const auto& [provider, nodes] : nodes_per_provider) {
    std::printf("%zu node%s on %s\n", nodes, nodes == 1 ? "" : "s", provider.c_str());
  }

  std::vector<nxrt::NamedTensor> inputs;
  for (const nxrt::ValueDescription& input : session->inputs()) {
    NXRT_ASSIGN_OR_RETURN(nxrt::Tensor tensor, RampInput(input));
    inputs.push_back({input.name, std::move(tensor)});
  }
  NXRT_ASSIGN_OR_RETURN(std::vector<nxrt::Tensor> outputs, session->Run(inputs));
  for (size_t i = 0; i < outputs.size(); ++i) PrintTensor(session->outputs()[i].name, outputs[i]);
  return nxrt::Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: run_model MODEL [EP...]\n");
    return 2;
  }
  const nxrt::Status status = RunModel(argv[1], std::vector<std::string>(argv + 2, argv + argc));
  if (!status.ok()) {
    std::fprintf(stderr, "run_model: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}
