#include "loader/node_arity.hpp"

#include <algorithm>
#include <limits>

#include "schema/onnx_op_schema.hpp"

namespace nxrt::graph {
namespace {

std::string Count(int n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// "3 inputs", "1 to 3 outputs", "at least 1 input".
std::string Allowed(int least, int most, const char* what) {
  if (least == most) return Count(least, what);
  if (most == std::numeric_limits<int>::max()) return "at least " + Count(least, what);
  return std::to_string(least) + " to " + Count(most, what);
}

}  // namespace

Status CheckNodeArity(const onnx::NodeProto& node, const std::string& domain, int64_t opset) {
  const OnnxOpSchema* schema = FindOnnxOpSchema(domain, node.op_type(), opset);
  if (schema == nullptr) return Status::Ok();
  const std::string at = " at opset " + std::to_string(opset);
  const int inputs = node.input_size(), outputs = node.output_size();
  if (inputs < schema->least_inputs || inputs > schema->most_inputs) {
    return InvalidArgument("has " + Count(inputs, "input") + "; the op takes " +
                           Allowed(schema->least_inputs, schema->most_inputs, "input") + at +
                           "; fix the node's inputs");
  }
  if (outputs < schema->least_outputs || outputs > schema->most_outputs) {
    return InvalidArgument("has " + Count(outputs, "output") + "; the op makes " +
                           Allowed(schema->least_outputs, schema->most_outputs, "output") + at +
                           "; fix the node's outputs");
  }
  for (int i = 0; i < std::min(inputs, 64); ++i) {
    if (node.input(i).empty() && (schema->required_inputs >> i & 1) != 0) {
      return InvalidArgument("input " + std::to_string(i) +
                             " is required but named empty; give the node its value");
    }
  }
  return Status::Ok();
}

}  // namespace nxrt::graph
