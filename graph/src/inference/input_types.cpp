#include "inference/input_types.hpp"

#include <map>
#include <string>

#include "schema/onnx_op_schema.hpp"

namespace nxrt::graph::inference {
namespace {

std::string Accepted(uint64_t mask) {
  std::string text;
  for (int32_t type = 1; type < 64; ++type) {
    if ((mask >> type & 1) == 0) continue;
    if (!text.empty()) text += ", ";
    text += DataTypeName(static_cast<DataType>(type));
  }
  return text;
}

}  // namespace

Status CheckInputTypes(const Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  const auto opset = graph.opset_imports.find(node.domain);
  if (opset == graph.opset_imports.end()) return Status::Ok();
  const OnnxOpSchema* schema = FindOnnxOpSchema(node.domain, node.op_type, opset->second);
  if (schema == nullptr || schema->formal_count == 0) return Status::Ok();
  const auto formals = schema->formals();
  std::map<int, size_t> first_of_parameter;  // type parameter -> first input typed by it
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!node.inputs[i]) continue;
    const Value& value = graph.value(*node.inputs[i]);
    // A node's output whose type no value_info declares stays kUnknown; its
    // dtype is the one shape inference gave it.
    const bool tensor = value.kind == ValueKind::kTensor || value.kind == ValueKind::kUnknown;
    if (!tensor || value.dtype == DataType::kUndefined) continue;
    const bool variadic_tail = i >= formals.size();
    const OnnxFormalInput& formal = formals[variadic_tail ? formals.size() - 1 : i];
    if (formal.element_types == 0) continue;
    const auto type = static_cast<int32_t>(value.dtype);
    const std::string at = " at opset " + std::to_string(opset->second);
    if (type <= 0 || type >= 64 || (formal.element_types >> type & 1) == 0) {
      return InvalidArgument(graph.Describe(id) + ": input " + std::to_string(i) + " ('" +
                             value.name + "') is " + std::string(DataTypeName(value.dtype)) +
                             "; the op takes " + Accepted(formal.element_types) + " there" + at +
                             "; cast it or fix the model");
    }
    // A variadic input's values share their type only when it says so.
    if (formal.type_parameter < 0 || (variadic_tail && !formal.homogeneous)) continue;
    const auto [first, inserted] = first_of_parameter.emplace(formal.type_parameter, i);
    const Value& other = graph.value(*node.inputs[first->second]);
    if (!inserted && other.dtype != value.dtype) {
      return InvalidArgument(
          graph.Describe(id) + ": inputs " + std::to_string(first->second) + " ('" + other.name +
          "') and " + std::to_string(i) + " ('" + value.name + "') must share one type but are " +
          std::string(DataTypeName(other.dtype)) + " and " +
          std::string(DataTypeName(value.dtype)) + at + "; cast one of them or fix the model");
    }
  }
  return Status::Ok();
}

}  // namespace nxrt::graph::inference
