// Small helpers for writing ONNX models in tests with the protobuf API, so
// each test states only the part of the model it is about.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

#include "nxrt/graph/loader.hpp"

namespace nxrt::graph::testing {

inline onnx::ModelProto NewModel(int64_t opset = 17) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* import = model.add_opset_import();
  import->set_domain("");
  import->set_version(opset);
  model.mutable_graph()->set_name("g");
  return model;
}

// Adds a tensor value_info of `elem_type` with static dims (-1 leaves a dim
// unnamed, a negative other than -1 is written as given).
inline void SetTensorType(onnx::ValueInfoProto* info, const std::string& name, int32_t elem_type,
                          std::initializer_list<int64_t> dims) {
  info->set_name(name);
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  auto* shape = tensor->mutable_shape();
  for (int64_t d : dims) {
    auto* dim = shape->add_dim();
    if (d != -1) dim->set_dim_value(d);
  }
}

inline void AddInput(onnx::ModelProto& model, const std::string& name,
                     std::initializer_list<int64_t> dims = {2},
                     int32_t elem_type = onnx::TensorProto::FLOAT) {
  SetTensorType(model.mutable_graph()->add_input(), name, elem_type, dims);
}

inline void AddOutput(onnx::ModelProto& model, const std::string& name,
                      std::initializer_list<int64_t> dims = {2},
                      int32_t elem_type = onnx::TensorProto::FLOAT) {
  SetTensorType(model.mutable_graph()->add_output(), name, elem_type, dims);
}

inline onnx::NodeProto* AddNode(onnx::GraphProto* graph, const std::string& op,
                                const std::string& name, std::vector<std::string> inputs,
                                std::vector<std::string> outputs) {
  auto* node = graph->add_node();
  node->set_op_type(op);
  node->set_name(name);
  for (const auto& i : inputs) node->add_input(i);
  for (const auto& o : outputs) node->add_output(o);
  return node;
}

inline onnx::NodeProto* AddNode(onnx::ModelProto& model, const std::string& op,
                                const std::string& name, std::vector<std::string> inputs,
                                std::vector<std::string> outputs) {
  return AddNode(model.mutable_graph(), op, name, std::move(inputs), std::move(outputs));
}

inline std::vector<std::byte> Serialize(const onnx::ModelProto& model) {
  const std::string text = model.SerializeAsString();
  const auto* begin = reinterpret_cast<const std::byte*>(text.data());
  return std::vector<std::byte>(begin, begin + text.size());
}

inline Result<Graph> Load(const onnx::ModelProto& model, const std::string& name = "bad.onnx",
                          const std::filesystem::path& dir = ".") {
  return LoadModelFromBytes(Serialize(model), name, dir);
}

}  // namespace nxrt::graph::testing
