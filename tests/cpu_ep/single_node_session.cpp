#include "single_node_session.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <utility>

#include "nxrt/environment.hpp"
#include "nxrt/session.hpp"

namespace nxrt_test {

using nxrt::graph::AttributeType;
using nxrt::graph::DataType;

nxrt::graph::Attribute IntAttribute(const std::string& name, int64_t value) {
  nxrt::graph::Attribute a;
  a.name = name;
  a.type = AttributeType::kInt;
  a.i = value;
  return a;
}

nxrt::graph::Attribute FloatAttribute(const std::string& name, float value) {
  nxrt::graph::Attribute a;
  a.name = name;
  a.type = AttributeType::kFloat;
  a.f = value;
  return a;
}

nxrt::graph::Attribute StringAttribute(const std::string& name, const std::string& value) {
  nxrt::graph::Attribute a;
  a.name = name;
  a.type = AttributeType::kString;
  a.s = value;
  return a;
}

nxrt::graph::Attribute IntsAttribute(const std::string& name, std::vector<int64_t> values) {
  nxrt::graph::Attribute a;
  a.name = name;
  a.type = AttributeType::kInts;
  a.ints = std::move(values);
  return a;
}

std::optional<nxrt::Tensor> RunSingleNode(const std::string& op, int64_t opset,
                                          const std::vector<NodeInput>& inputs,
                                          std::vector<nxrt::graph::Attribute> attributes,
                                          DataType output_dtype) {
  nxrt::graph::Graph graph;
  graph.model_path = op + ".onnx";
  graph.name = op;
  graph.opset_imports[""] = opset;
  graph.weights = std::make_shared<nxrt::graph::WeightStore>();
  nxrt::graph::Node node;
  node.op_type = op;
  node.name = op;
  node.attributes = std::move(attributes);
  for (const NodeInput& input : inputs) {
    if (input.name.empty()) {
      node.inputs.push_back(std::nullopt);
      continue;
    }
    nxrt::graph::Value v;
    v.name = input.name;
    v.dtype = input.dtype;
    v.shape = nxrt::graph::Shape{};
    for (int64_t d : input.dims) v.shape->push_back(nxrt::graph::Dim::Static(d));
    v.is_graph_input = true;
    const nxrt::graph::ValueId id = graph.AddValue(std::move(v));
    graph.inputs.push_back(id);
    node.inputs.push_back(id);
  }
  nxrt::graph::Value out;
  out.name = "y";
  out.dtype = output_dtype;
  const nxrt::graph::ValueId out_id = graph.AddValue(std::move(out));
  node.outputs.push_back(out_id);
  graph.outputs.push_back(out_id);
  graph.AddNode(std::move(node));

  nxrt::EnvironmentOptions environment_options;
  environment_options.plugin_folders = {NXRT_BINARY_DIR "/lib"};
  auto environment = nxrt::Environment::Create(environment_options);
  if (!environment.ok()) {
    ADD_FAILURE() << environment.status().ToString();
    return std::nullopt;
  }
  nxrt::SessionOptions options;
  options.providers = {{"cpu", {}}};
  auto session = nxrt::Session::Create(*environment, std::move(graph), options);
  if (!session.ok()) {
    ADD_FAILURE() << op << ": " << session.status().ToString();
    return std::nullopt;
  }
  std::vector<std::vector<std::byte>> storage;
  storage.reserve(inputs.size());  // the borrowed tensors point into it
  std::vector<nxrt::NamedTensor> bound;
  for (const NodeInput& input : inputs) {
    if (input.name.empty()) continue;
    storage.push_back(input.bytes);
    bound.push_back({input.name, nxrt::Tensor::Borrow(input.dtype, input.dims,
                                                      storage.back().data(), input.bytes.size())});
  }
  auto outputs = (*session)->Run(bound);
  if (!outputs.ok()) {
    ADD_FAILURE() << op << ": " << outputs.status().ToString();
    return std::nullopt;
  }
  return std::move(outputs->front());
}

std::vector<double> ValuesAsDouble(const nxrt::Tensor& tensor) {
  std::vector<double> values;
  if (tensor.dtype() == DataType::kFloat32) {
    for (float v : tensor.values<float>()) values.push_back(v);
  } else if (tensor.dtype() == DataType::kFloat64) {
    for (double v : tensor.values<double>()) values.push_back(v);
  } else {
    ADD_FAILURE() << "ValuesAsDouble: not a float32 or float64 tensor";
  }
  return values;
}

}  // namespace nxrt_test
