#include "plugin_host/node_view.hpp"

#include <cstring>
#include <utility>

namespace {

nxrt_value_kind KindOf(nxrt::graph::ValueKind kind) {
  using nxrt::graph::ValueKind;
  switch (kind) {
    case ValueKind::kSequence:
    case ValueKind::kOptionalSequence:
      return NXRT_VALUE_SEQUENCE;
    case ValueKind::kTensor:
    case ValueKind::kOptionalTensor:
    case ValueKind::kUnknown:
      return NXRT_VALUE_TENSOR;
  }
  return NXRT_VALUE_TENSOR;
}

}  // namespace

nxrt_node::nxrt_node(const nxrt::graph::Graph& graph, nxrt::graph::NodeId id)
    : nxrt_node(graph, id, nullptr) {}

nxrt_node::nxrt_node(const nxrt::graph::Graph& graph, nxrt::graph::NodeId id,
                     std::shared_ptr<const nxrt::graph::Node> replacement)
    : graph_(&graph), id_(id), replacement_(std::move(replacement)) {
  const nxrt::graph::Node& n = node();
  inputs_ = BuildInfos(n.inputs);
  outputs_ = BuildInfos(n.outputs);
  constant_inputs_.reserve(n.inputs.size());
  for (const auto& input : n.inputs) {
    constant_inputs_.push_back(input && graph.value(*input).is_constant());
  }
  attribute_strings_.resize(n.attributes.size());
  for (size_t i = 0; i < n.attributes.size(); ++i) {
    const nxrt::graph::Attribute& a = n.attributes[i];
    if (a.type != nxrt::graph::AttributeType::kTensor || !a.tensor || !graph.weights) continue;
    const nxrt::graph::TensorData& data = graph.weights->Get(*a.tensor);
    if (data.dtype != nxrt::graph::DataType::kString) continue;
    for (const std::string& s : data.strings) attribute_strings_[i].push_back({s.data(), s.size()});
  }
}

std::string nxrt_node::Describe() const {
  if (!replacement_) return graph_->Describe(id_);
  const std::string& domain = replacement_->domain;
  return graph_->Describe(id_) + " fused as " + (domain.empty() ? "" : domain + "::") +
         replacement_->op_type;
}

nxrt_node::ValueInfos nxrt_node::BuildInfos(
    const std::vector<std::optional<nxrt::graph::ValueId>>& values) const {
  ValueInfos result;
  result.infos.resize(values.size());
  result.dims.resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    nxrt_value_info& info = result.infos[i];
    info.struct_size = sizeof(nxrt_value_info);
    info.kind = NXRT_VALUE_NONE;
    info.dtype = NXRT_DTYPE_UNDEFINED;
    info.rank = -1;
    info.dims = nullptr;
    if (!values[i]) continue;
    const nxrt::graph::Value& value = graph_->value(*values[i]);
    info.kind = KindOf(value.kind);
    info.dtype = static_cast<nxrt_dtype>(value.dtype);
    if (!value.shape) continue;
    info.rank = static_cast<int64_t>(value.shape->size());
    for (const nxrt::graph::Dim& d : *value.shape) {
      if (d.is_static()) {
        result.dims[i].push_back({sizeof(nxrt_dim), d.extent(), nullptr});
      } else {
        result.dims[i].push_back({sizeof(nxrt_dim), -1, graph_->symbol(d.symbol()).name.c_str()});
      }
    }
  }
  // Pointers are taken once every vector has its final size.
  for (size_t i = 0; i < values.size(); ++i) {
    if (!result.dims[i].empty()) result.infos[i].dims = result.dims[i].data();
  }
  return result;
}

const char* nxrt_node::input_name(size_t index) const {
  const auto& inputs = node().inputs;
  if (index >= inputs.size() || !inputs[index]) return nullptr;
  return graph_->value(*inputs[index]).name.c_str();
}

const char* nxrt_node::output_name(size_t index) const {
  const auto& outputs = node().outputs;
  if (index >= outputs.size() || !outputs[index]) return nullptr;
  return graph_->value(*outputs[index]).name.c_str();
}

const nxrt::graph::Attribute* nxrt_node::attribute(const char* name) const {
  if (name == nullptr) return nullptr;
  for (const nxrt::graph::Attribute& a : node().attributes) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::span<const nxrt_string_view> nxrt_node::tensor_attribute_strings(
    const nxrt::graph::Attribute& a) const {
  const auto& attributes = node().attributes;
  for (size_t i = 0; i < attributes.size(); ++i) {
    if (&attributes[i] == &a) return attribute_strings_[i];
  }
  return {};
}
