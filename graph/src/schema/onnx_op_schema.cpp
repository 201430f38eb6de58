#include "schema/onnx_op_schema.hpp"

#include <algorithm>
#include <tuple>

namespace nxrt::graph {
namespace {

#include "schema/onnx_schema_table.inc"

}  // namespace

std::span<const OnnxFormalInput> OnnxOpSchema::formals() const {
  return std::span(kOnnxFormalInputs).subspan(first_formal, formal_count);
}

std::span<const OnnxAttribute> OnnxOpSchema::attributes() const {
  return std::span(kOnnxAttributes).subspan(first_attribute, attribute_count);
}

const OnnxOpSchema* FindOnnxOpSchema(std::string_view domain, std::string_view op, int64_t opset) {
  const auto key = [](const OnnxOpSchema& s) { return std::tie(s.domain, s.op); };
  const auto wanted = std::tie(domain, op);
  const std::span rows(kOnnxOpSchemas);
  auto row = std::lower_bound(rows.begin(), rows.end(), wanted,
                              [&](const OnnxOpSchema& s, const auto& w) { return key(s) < w; });
  const OnnxOpSchema* found = nullptr;
  for (; row != rows.end() && key(*row) == wanted && row->since_version <= opset; ++row) {
    found = &*row;
  }
  return found;
}

}  // namespace nxrt::graph
