#include "common/tensor_summary.hpp"

#include <algorithm>

#include "common/element_values.hpp"
#include "nxrt/graph/dtype.hpp"

namespace nxrt::cli {

std::string ShapeText(std::span<const int64_t> shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ',';
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::string ShapeText(const std::vector<std::string>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ',';
    text += shape[i];
  }
  return text + "]";
}

std::vector<std::string> FirstValues(const Tensor& tensor, size_t count) {
  std::vector<std::string> values;
  if (tensor.dtype() == DataType::kString) {
    const size_t shown = std::min(count, tensor.strings().size());
    for (size_t i = 0; i < shown; ++i) values.push_back(JsonQuote(tensor.strings()[i]));
    return values;
  }
  const size_t shown = std::min(count, ScalarCount(tensor.dtype(), tensor.byte_size()));
  for (size_t i = 0; i < shown; ++i)
    values.push_back(FormatScalar(tensor.dtype(), tensor.data(), i));
  return values;
}

std::string SummarizeTensor(const Tensor& tensor) {
  std::string text =
      std::string(graph::DataTypeName(tensor.dtype())) + " " + ShapeText(tensor.shape());
  const std::vector<std::string> values = FirstValues(tensor);
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : " ") + values[i];
  if (values.size() < tensor.element_count()) text += values.empty() ? " ..." : ", ...";
  return text;
}

void WriteTensorSummary(JsonWriter& json, const Tensor& tensor) {
  json.Key("dtype").String(graph::DataTypeName(tensor.dtype()));
  json.Key("shape").BeginArray();
  for (int64_t d : tensor.shape()) json.Integer(d);
  json.EndArray();
  json.Key("first_values").BeginArray();
  if (tensor.dtype() == DataType::kString) {
    const size_t shown = std::min(kSummaryValueCount, tensor.strings().size());
    for (size_t i = 0; i < shown; ++i) json.String(tensor.strings()[i]);
  } else {
    const size_t shown =
        std::min(kSummaryValueCount, ScalarCount(tensor.dtype(), tensor.byte_size()));
    for (size_t i = 0; i < shown; ++i) json.Number(ReadScalar(tensor.dtype(), tensor.data(), i));
  }
  json.EndArray();
}

}  // namespace nxrt::cli
