// The signatures of the ops onnx defines, every version of every op of its
// domains, from a table generated out of onnx's own schemas
// (onnx_schema_table.inc, scripts/lib/make_onnx_schema_table.py): how many
// inputs and outputs each takes, which inputs are required, which tensor
// element types each input accepts, and which attributes it knows. The loader
// holds node arities and attributes to it and shape inference input types; ops onnx does not define
// (contrib domains, model-local functions) have no entry.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace nxrt::graph {

struct OnnxFormalInput {
  uint64_t element_types;  // bit i: TensorProto type i accepted; 0: not checked
  int type_parameter;      // inputs sharing one (>= 0) share their type
  bool homogeneous;        // a variadic input's values share their type
};

struct OnnxAttribute {
  std::string_view name;
  int type;  // an onnx::AttributeProto::AttributeType
  bool required;
};

struct OnnxOpSchema {
  std::string_view domain;
  std::string_view op;
  int64_t since_version;
  int least_inputs, most_inputs, least_outputs, most_outputs;
  uint64_t required_inputs;  // bit i: input position i may not be named empty
  uint32_t first_formal, formal_count;
  uint32_t first_attribute, attribute_count;

  // The formal inputs in order; a variadic one is last and covers the rest.
  std::span<const OnnxFormalInput> formals() const;
  // The attributes the op knows, by name.
  std::span<const OnnxAttribute> attributes() const;
};

// The schema in force for `op` of `domain` ("" for the default domain) at
// `opset`: its newest version at or below it. Null when onnx defines no such
// op there.
const OnnxOpSchema* FindOnnxOpSchema(std::string_view domain, std::string_view op, int64_t opset);

}  // namespace nxrt::graph
