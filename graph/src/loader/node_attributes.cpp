#include "loader/node_attributes.hpp"

#include <algorithm>
#include <cctype>

#include "nxrt/graph/quoted_name.hpp"
#include "schema/onnx_op_schema.hpp"

namespace nxrt::graph {
namespace {

// "float", "ints", "graph": how onnx spells the type, in lower case.
std::string TypeName(int type) {
  std::string name = onnx::AttributeProto::AttributeType_Name(
      static_cast<onnx::AttributeProto::AttributeType>(type));
  if (name.empty()) return "type " + std::to_string(type);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return name;
}

}  // namespace

Status CheckNodeAttributes(const onnx::NodeProto& node, const std::string& domain, int64_t opset) {
  const OnnxOpSchema* schema = FindOnnxOpSchema(domain, node.op_type(), opset);
  if (schema == nullptr) return Status::Ok();
  const std::string at = " at opset " + std::to_string(opset);
  const std::span<const OnnxAttribute> known = schema->attributes();
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name().starts_with("__")) continue;
    const auto spec = std::find_if(known.begin(), known.end(), [&](const OnnxAttribute& a) {
      return a.name == attribute.name();
    });
    if (spec == known.end()) {
      return InvalidArgument("has attribute " + Quoted(attribute.name()) +
                             ", which the op does not know" + at + "; remove it or fix its name");
    }
    if (attribute.type() != spec->type) {
      return InvalidArgument("attribute " + Quoted(attribute.name()) + " is " +
                             TypeName(attribute.type()) + "; the op takes " + TypeName(spec->type) +
                             at + "; fix its type");
    }
  }
  for (const OnnxAttribute& spec : known) {
    if (!spec.required) continue;
    const bool present =
        std::any_of(node.attribute().begin(), node.attribute().end(),
                    [&](const onnx::AttributeProto& a) { return a.name() == spec.name; });
    if (!present) {
      return InvalidArgument("lacks attribute " + Quoted(spec.name) + ", which the op requires" +
                             at + "; add it");
    }
  }
  return Status::Ok();
}

}  // namespace nxrt::graph
