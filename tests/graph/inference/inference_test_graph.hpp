// A small builder of hand-made Graphs for shape inference tests: inputs with
// static or named symbolic dims, int64 initializers, nodes by value name.
#pragma once

#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "nxrt/graph/ir.hpp"
#include "nxrt/graph/shape_inference.hpp"

namespace nxrt::graph::testing {

inline Attribute IntAttr(const std::string& name, int64_t v) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kInt;
  a.i = v;
  return a;
}

inline Attribute IntsAttr(const std::string& name, std::vector<int64_t> v) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kInts;
  a.ints = std::move(v);
  return a;
}

inline Attribute StringAttr(const std::string& name, const std::string& v) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kString;
  a.s = v;
  return a;
}

class TestGraph {
 public:
  // A dim given as a number or a symbol name.
  struct D {
    D(int64_t v) : extent(v) {}      // NOLINT: implicit by design
    D(const char* s) : symbol(s) {}  // NOLINT: implicit by design
    int64_t extent = 0;
    const char* symbol = nullptr;
  };

  TestGraph() { graph.opset_imports[""] = 21; }

  Shape MakeShape(std::initializer_list<D> dims) {
    Shape s;
    for (const D& d : dims) {
      s.push_back(d.symbol ? Dim::Symbolic(graph.DeclareSymbol(d.symbol)) : Dim::Static(d.extent));
    }
    return s;
  }

  Dim Sym(const char* name) { return Dim::Symbolic(graph.DeclareSymbol(name)); }

  ValueId Input(const std::string& name, std::initializer_list<D> dims,
                DataType dtype = DataType::kFloat32) {
    Value v;
    v.name = name;
    v.dtype = dtype;
    v.shape = MakeShape(dims);
    v.is_graph_input = true;
    ValueId id = graph.AddValue(std::move(v));
    graph.inputs.push_back(id);
    return id;
  }

  ValueId RankUnknownInput(const std::string& name, DataType dtype = DataType::kFloat32) {
    Value v;
    v.name = name;
    v.dtype = dtype;
    v.is_graph_input = true;
    ValueId id = graph.AddValue(std::move(v));
    graph.inputs.push_back(id);
    return id;
  }

  ValueId Int64s(const std::string& name, std::vector<int64_t> values,
                 std::vector<int64_t> dims = {-1}) {
    if (dims == std::vector<int64_t>{-1}) dims = {static_cast<int64_t>(values.size())};
    std::vector<std::byte> bytes(values.size() * sizeof(int64_t));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    Value v;
    v.name = name;
    v.dtype = DataType::kInt64;
    v.initializer = graph.weights->AddOwned(DataType::kInt64, dims, std::move(bytes));
    return graph.AddValue(std::move(v));
  }

  ValueId Scalar(const std::string& name, int64_t value) { return Int64s(name, {value}, {}); }

  NodeId Op(const std::string& op, std::vector<std::string> inputs,
            std::vector<std::string> outputs, std::vector<Attribute> attributes = {},
            const std::string& domain = "") {
    Node n;
    n.op_type = op;
    n.domain = domain;
    n.name = op + "_" + std::to_string(graph.nodes.size());
    n.attributes = std::move(attributes);
    for (const std::string& in : inputs) {
      if (in.empty())
        n.inputs.push_back(std::nullopt);
      else
        n.inputs.push_back(*graph.FindValue(in));
    }
    for (const std::string& out : outputs) {
      if (out.empty()) {
        n.outputs.push_back(std::nullopt);
        continue;
      }
      auto existing = graph.FindValue(out);
      if (!existing) {
        Value v;
        v.name = out;
        v.kind = ValueKind::kUnknown;  // as the loader leaves an undeclared output
        existing = graph.AddValue(std::move(v));
      }
      n.outputs.push_back(*existing);
    }
    return graph.AddNode(std::move(n));
  }

  void Output(const std::string& name) { graph.outputs.push_back(*graph.FindValue(name)); }

  const Value& V(const std::string& name) const { return graph.value(*graph.FindValue(name)); }
  const Shape& ShapeOf(const std::string& name) const { return *V(name).shape; }

  Status Infer(const ShapeInferenceOptions& options = {}) { return InferShapes(graph, options); }

  Graph graph;
};

}  // namespace nxrt::graph::testing
