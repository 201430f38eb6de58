// Small models built directly in the IR for CPU EP tests run through a
// session: typed inputs (with or without a shape), int64 constants, nodes
// with any number of inputs and outputs, and graph attributes for bodies.
#pragma once

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "attribute_builders.hpp"
#include "nxrt/environment.hpp"
#include "nxrt/graph/ir.hpp"
#include "nxrt/graph/weight_store.hpp"
#include "nxrt/session.hpp"

namespace nxrt_test {

inline nxrt::graph::Attribute GraphAttr(const std::string& name, nxrt::graph::Graph body) {
  nxrt::graph::Attribute a;
  a.name = name;
  a.type = nxrt::graph::AttributeType::kGraph;
  a.graph = std::make_shared<nxrt::graph::Graph>(std::move(body));
  return a;
}

class IrModelBuilder {
 public:
  using ValueId = nxrt::graph::ValueId;
  using DataType = nxrt::graph::DataType;
  using ValueKind = nxrt::graph::ValueKind;

  explicit IrModelBuilder(int64_t opset, const std::string& name = "model") {
    graph_.model_path = name + ".onnx";
    graph_.name = name;
    graph_.opset_imports[""] = opset;
    graph_.weights = std::make_shared<nxrt::graph::WeightStore>();
  }

  // A graph input; no dims: its shape is left to inference (body inputs).
  ValueId Input(const std::string& name, std::optional<std::vector<int64_t>> dims,
                DataType dtype = DataType::kFloat32) {
    const ValueId id = Add(name, ValueKind::kTensor, dtype, ShapeOf(dims));
    graph_.value(id).is_graph_input = true;
    graph_.inputs.push_back(id);
    return id;
  }

  // A float graph input whose dims are extents or symbol names; one name is
  // one symbol throughout the graph.
  ValueId SymbolicInput(const std::string& name,
                        const std::vector<std::variant<int64_t, std::string>>& dims) {
    nxrt::graph::Shape shape;
    for (const auto& d : dims) {
      shape.push_back(
          std::holds_alternative<int64_t>(d)
              ? nxrt::graph::Dim::Static(std::get<int64_t>(d))
              : nxrt::graph::Dim::Symbolic(graph_.DeclareSymbol(std::get<std::string>(d))));
    }
    const ValueId id = Add(name, ValueKind::kTensor, DataType::kFloat32, std::move(shape));
    graph_.value(id).is_graph_input = true;
    graph_.inputs.push_back(id);
    return id;
  }

  ValueId Floats(const std::string& name, const std::vector<int64_t>& dims,
                 const std::vector<float>& values) {
    const ValueId id = Add(name, ValueKind::kTensor, DataType::kFloat32, ShapeOf(dims));
    std::vector<std::byte> bytes(values.size() * sizeof(float));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    graph_.value(id).initializer =
        graph_.weights->AddOwned(DataType::kFloat32, dims, std::move(bytes));
    return id;
  }

  ValueId Int64s(const std::string& name, const std::vector<int64_t>& dims,
                 const std::vector<int64_t>& values) {
    const ValueId id = Add(name, ValueKind::kTensor, DataType::kInt64, ShapeOf(dims));
    std::vector<std::byte> bytes(values.size() * sizeof(int64_t));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    graph_.value(id).initializer =
        graph_.weights->AddOwned(DataType::kInt64, dims, std::move(bytes));
    return id;
  }

  // A node; an input of nullopt is left out, every output gets `kind`.
  std::vector<ValueId> Node(const std::string& op,
                            const std::vector<std::optional<ValueId>>& inputs,
                            const std::vector<std::string>& outputs, ValueKind kind, DataType dtype,
                            std::vector<nxrt::graph::Attribute> attributes = {}) {
    nxrt::graph::Node n;
    n.op_type = op;
    n.name = outputs.empty() ? op : outputs.front();
    n.attributes = std::move(attributes);
    n.inputs.assign(inputs.begin(), inputs.end());
    std::vector<ValueId> ids;
    for (const std::string& output : outputs) {
      ids.push_back(Add(output, kind, dtype, std::nullopt));
      n.outputs.push_back(ids.back());
    }
    graph_.AddNode(std::move(n));
    return ids;
  }
  ValueId Tensor(const std::string& op, const std::vector<std::optional<ValueId>>& inputs,
                 const std::string& output, DataType dtype = DataType::kFloat32,
                 std::vector<nxrt::graph::Attribute> attributes = {}) {
    return Node(op, inputs, {output}, ValueKind::kTensor, dtype, std::move(attributes)).front();
  }
  ValueId Sequence(const std::string& op, const std::vector<std::optional<ValueId>>& inputs,
                   const std::string& output, std::vector<nxrt::graph::Attribute> attributes = {}) {
    return Node(op, inputs, {output}, ValueKind::kSequence, DataType::kFloat32,
                std::move(attributes))
        .front();
  }

  void Output(ValueId id) { graph_.outputs.push_back(id); }
  nxrt::graph::Graph Take() { return std::move(graph_); }

 private:
  static std::optional<nxrt::graph::Shape> ShapeOf(
      const std::optional<std::vector<int64_t>>& dims) {
    if (!dims) return std::nullopt;
    nxrt::graph::Shape shape;
    for (int64_t d : *dims) shape.push_back(nxrt::graph::Dim::Static(d));
    return shape;
  }
  ValueId Add(const std::string& name, ValueKind kind, DataType dtype,
              std::optional<nxrt::graph::Shape> shape) {
    nxrt::graph::Value v;
    v.name = name;
    v.kind = kind;
    v.dtype = dtype;
    v.shape = std::move(shape);
    return graph_.AddValue(std::move(v));
  }

  nxrt::graph::Graph graph_;
};

inline std::unique_ptr<nxrt::Session> CpuSessionOf(nxrt::graph::Graph graph,
                                                   bool rewrite_graph = true) {
  nxrt::EnvironmentOptions environment_options;
  environment_options.plugin_folders = {NXRT_BINARY_DIR "/lib"};
  auto environment = nxrt::Environment::Create(environment_options);
  if (!environment.ok()) return nullptr;
  nxrt::SessionOptions options;
  options.providers = {{"cpu", {}}};
  options.rewrite_graph = rewrite_graph;
  auto session = nxrt::Session::Create(*environment, std::move(graph), options);
  return session.ok() ? std::move(session).value() : nullptr;
}

}  // namespace nxrt_test
