#include "loader/node_arity.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <tuple>

namespace nxrt::graph {
namespace {

struct OpArity {
  std::string_view domain;
  std::string_view op;
  int64_t since;
  int least_inputs, most_inputs, least_outputs, most_outputs;
  uint64_t required_inputs;  // bit i: input position i may not be named empty
};

// Sorted by domain, op and since version.
constexpr OpArity kArities[] = {
#include "loader/onnx_arity_table.inc"
};

// The row in force for `op` of `domain` at `opset`; null when onnx defines
// no such op there.
const OpArity* FindArity(std::string_view domain, std::string_view op, int64_t opset) {
  const auto key = [](const OpArity& a) { return std::tie(a.domain, a.op); };
  const auto wanted = std::tie(domain, op);
  const std::span rows(kArities);
  const auto first = std::lower_bound(rows.begin(), rows.end(), wanted,
                                      [&](const OpArity& a, const auto& w) { return key(a) < w; });
  const OpArity* found = nullptr;
  for (auto row = first; row != rows.end() && key(*row) == wanted && row->since <= opset; ++row) {
    found = &*row;
  }
  return found;
}

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
  const OpArity* arity = FindArity(domain, node.op_type(), opset);
  if (arity == nullptr) return Status::Ok();
  const std::string at = " at opset " + std::to_string(opset);
  const int inputs = node.input_size(), outputs = node.output_size();
  if (inputs < arity->least_inputs || inputs > arity->most_inputs) {
    return InvalidArgument("has " + Count(inputs, "input") + "; the op takes " +
                           Allowed(arity->least_inputs, arity->most_inputs, "input") + at +
                           "; fix the node's inputs");
  }
  if (outputs < arity->least_outputs || outputs > arity->most_outputs) {
    return InvalidArgument("has " + Count(outputs, "output") + "; the op makes " +
                           Allowed(arity->least_outputs, arity->most_outputs, "output") + at +
                           "; fix the node's outputs");
  }
  for (int i = 0; i < std::min(inputs, 64); ++i) {
    if (node.input(i).empty() && (arity->required_inputs >> i & 1) != 0) {
      return InvalidArgument("input " + std::to_string(i) +
                             " is required but named empty; give the node its value");
    }
  }
  return Status::Ok();
}

}  // namespace nxrt::graph
