// The in-memory model: a Graph of Nodes connected by Values, with a symbol
// table for the unknown extents of their shapes and a store for initializer
// bytes. Loaded from ONNX by loader.hpp, annotated by shape inference, read by
// the capture classifier and the core. Knows nothing of plugins.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "nxrt/graph/dtype.hpp"
#include "nxrt/graph/ids.hpp"
#include "nxrt/graph/model_metadata.hpp"
#include "nxrt/graph/shape.hpp"
#include "nxrt/graph/symbol.hpp"
#include "nxrt/graph/weight_store.hpp"
#include "nxrt/support/export.hpp"

namespace nxrt::graph {

class Graph;

enum class ValueKind { kTensor, kSequence, kOptionalTensor, kOptionalSequence, kUnknown };

struct Value {
  std::string name;
  ValueKind kind = ValueKind::kTensor;
  DataType dtype = DataType::kUndefined;  // of the tensor, or of each sequence element
  std::optional<Shape> shape;             // nullopt: rank unknown
  NodeId producer;                        // invalid for inputs, initializers, outer values
  bool is_graph_input = false;
  bool is_outer_scope = false;  // a subgraph's reference to an enclosing value
  // An initializer's data. One that the model also lists among its graph
  // inputs is a default a run may replace (an overridable initializer: it
  // stays out of Graph::inputs, and its declared type stands).
  std::optional<WeightRef> initializer;

  // An initializer no run can replace.
  bool is_constant() const { return initializer.has_value() && !is_graph_input; }
  bool is_overridable() const { return initializer.has_value() && is_graph_input; }
};

// Sparse tensor attributes arrive densified, as kTensor and kTensors.
enum class AttributeType {
  kFloat,
  kInt,
  kString,
  kTensor,
  kGraph,
  kFloats,
  kInts,
  kStrings,
  kTensors,
  kGraphs,
  kTypeProto,
  kTypeProtos,
};

// A value's declared type, as a TYPE_PROTO attribute carries it (Optional's
// "type"); its symbols live in the owning graph's table.
struct ValueType {
  ValueKind kind = ValueKind::kUnknown;
  DataType dtype = DataType::kUndefined;
  std::optional<Shape> shape;
};

struct Attribute {
  std::string name;
  AttributeType type = AttributeType::kInt;
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::optional<WeightRef> tensor;  // in the owning graph's weight store
  std::shared_ptr<Graph> graph;     // If/Loop/Scan body
  std::vector<WeightRef> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
  std::optional<ValueType> type_proto;
  std::vector<ValueType> type_protos;
};

struct Node {
  std::string op_type;
  std::string domain;  // "" for the default ONNX domain ("ai.onnx" is normalised to "")
  std::string name;
  std::vector<Attribute> attributes;
  std::vector<std::optional<ValueId>> inputs;   // nullopt: an absent optional input
  std::vector<std::optional<ValueId>> outputs;  // nullopt: an absent optional output

  bool is_default_domain() const { return domain.empty(); }
  const Attribute* FindAttribute(const std::string& attr_name) const;
};

class NXRT_API Graph {
 public:
  Graph();
  ~Graph();
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;

  // ---- tables ---------------------------------------------------------
  std::vector<Node> nodes;
  std::vector<Value> values;
  std::vector<Symbol> symbols;
  std::vector<ValueId> inputs;  // graph inputs, initializers excluded
  std::vector<ValueId> outputs;
  std::map<std::string, int64_t> opset_imports;  // domain ("" default) -> version
  std::string name;
  std::string model_path;  // for error messages; "" when loaded from bytes
  // The loaded model's; empty in subgraphs and in graphs built in code.
  ModelMetadata metadata;

  // Shared by a model's graph and all its subgraphs.
  std::shared_ptr<WeightStore> weights;

  // ---- lineage (written by shape inference) -----------------------------
  SymbolLineage lineage;
  // The first symbol id inference minted; nullopt until inference ran.
  std::optional<uint32_t> inference_symbol_floor;

  // ---- access -----------------------------------------------------------
  Node& node(NodeId id) { return nodes.at(id.index); }
  const Node& node(NodeId id) const { return nodes.at(id.index); }
  Value& value(ValueId id) { return values.at(id.index); }
  const Value& value(ValueId id) const { return values.at(id.index); }
  const Value* try_value(ValueId id) const {
    return id.index < values.size() ? &values[id.index] : nullptr;
  }
  const Symbol& symbol(SymbolId id) const { return symbols.at(id.index); }

  // The value named `value_name`, if any.
  std::optional<ValueId> FindValue(const std::string& value_name) const;

  // ---- building -----------------------------------------------------------
  ValueId AddValue(Value v);
  NodeId AddNode(Node n);  // sets the producer of each output value
  // Drops the nodes marked in `removed` (by node id) and renumbers the rest,
  // keeping their order; only for rewrites, before anything holds a NodeId.
  // A value a removed node produced keeps no producer.
  void RemoveNodes(const std::vector<bool>& removed);
  SymbolId AddSymbol(Symbol s);
  // A declared symbol for `dim_param`, reusing the one already of that name.
  SymbolId DeclareSymbol(const std::string& dim_param);

  // Opset version in force for `domain` ("" default); nullopt when not imported.
  std::optional<int64_t> OpsetFor(const std::string& domain) const;

  // "model.onnx: node 'name' (Op)" prefix for error messages.
  std::string Describe(NodeId id) const;

 private:
  std::unordered_map<std::string, ValueId> value_by_name_;
  std::unordered_map<std::string, SymbolId> symbol_by_name_;
};

}  // namespace nxrt::graph
