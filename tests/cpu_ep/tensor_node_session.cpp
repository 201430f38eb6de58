#include "tensor_node_session.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <utility>

#include "nxrt/environment.hpp"
#include "nxrt/graph/weight_store.hpp"

namespace nxrt_test {

using nxrt::graph::AttributeType;

nxrt::Result<TensorNodeSession> MakeTensorNodeSession(TensorNode spec) {
  nxrt::graph::Graph graph;
  graph.model_path = spec.op + ".onnx";
  graph.name = spec.op;
  graph.opset_imports[""] = spec.domain.empty() ? spec.opset : 21;
  if (!spec.domain.empty()) graph.opset_imports[spec.domain] = spec.opset;
  graph.weights = std::make_shared<nxrt::graph::WeightStore>();
  nxrt::graph::Node node;
  node.op_type = spec.op;
  node.domain = spec.domain;
  node.name = spec.name;
  node.attributes = std::move(spec.attributes);
  for (nxrt::NamedTensor& attribute : spec.tensor_attributes) {
    nxrt::graph::Attribute a;
    a.name = attribute.name;
    a.type = AttributeType::kTensor;
    const nxrt::Tensor& t = attribute.tensor;
    if (t.dtype() == nxrt::graph::DataType::kString) {
      a.tensor = graph.weights->AddStrings(t.shape(), t.strings());
    } else {
      const auto* bytes = static_cast<const std::byte*>(t.data());
      a.tensor = graph.weights->AddOwned(t.dtype(), t.shape(),
                                         std::vector<std::byte>(bytes, bytes + t.byte_size()));
    }
    node.attributes.push_back(std::move(a));
  }
  std::vector<nxrt::NamedTensor> bound;
  for (const nxrt::NamedTensor& input : spec.inputs) {
    if (input.name.empty()) {
      node.inputs.push_back(std::nullopt);
      continue;
    }
    bound.push_back(input);
    nxrt::graph::Value v;
    v.name = input.name;
    v.dtype = input.tensor.dtype();
    v.shape = nxrt::graph::Shape{};
    for (int64_t d : input.tensor.shape()) v.shape->push_back(nxrt::graph::Dim::Static(d));
    v.is_graph_input = true;
    const nxrt::graph::ValueId id = graph.AddValue(std::move(v));
    graph.inputs.push_back(id);
    node.inputs.push_back(id);
  }
  for (size_t i = 0; i < spec.outputs.size(); ++i) {
    nxrt::graph::Value out;
    out.name = "y" + std::to_string(i);
    out.dtype = spec.outputs[i];
    const nxrt::graph::ValueId id = graph.AddValue(std::move(out));
    node.outputs.push_back(id);
    graph.outputs.push_back(id);
  }
  graph.AddNode(std::move(node));

  nxrt::EnvironmentOptions environment_options;
  environment_options.plugin_folders = {NXRT_BINARY_DIR "/lib"};
  NXRT_ASSIGN_OR_RETURN(auto environment, nxrt::Environment::Create(environment_options));
  nxrt::SessionOptions options;
  options.providers = {{"cpu", std::move(spec.cpu_options)}};
  options.memory_limit_bytes = spec.memory_limit_bytes;
  NXRT_ASSIGN_OR_RETURN(auto session,
                        nxrt::Session::Create(environment, std::move(graph), options));
  return TensorNodeSession{std::move(session), std::move(bound)};
}

nxrt::Result<std::vector<nxrt::Tensor>> RunTensorNode(TensorNode node) {
  NXRT_ASSIGN_OR_RETURN(TensorNodeSession made, MakeTensorNodeSession(std::move(node)));
  return made.session->Run(made.inputs);
}

nxrt::graph::Attribute StringsAttribute(const std::string& name, std::vector<std::string> values) {
  nxrt::graph::Attribute a;
  a.name = name;
  a.type = AttributeType::kStrings;
  a.strings = std::move(values);
  return a;
}

nxrt::graph::Attribute FloatsAttribute(const std::string& name, std::vector<float> values) {
  nxrt::graph::Attribute a;
  a.name = name;
  a.type = AttributeType::kFloats;
  a.floats = std::move(values);
  return a;
}

nxrt::Tensor Strings(std::vector<int64_t> dims, std::vector<std::string> values) {
  return nxrt::Tensor::FromStrings(std::move(dims), std::move(values)).value();
}

void ExpectRefused(TensorNode node, const std::string& fault) {
  const std::string op = node.op;
  auto result = RunTensorNode(std::move(node));
  ASSERT_FALSE(result.ok()) << op << " ran what it should refuse (" << fault << ")";
  EXPECT_NE(result.status().message().find(fault), std::string::npos)
      << op << ": " << result.status().message();
}

}  // namespace nxrt_test
