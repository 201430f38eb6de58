// Hand-built graphs for the capture tests: symbols, shaped values and nodes in
// a few lines each, with lineage records written directly, so the classifier
// is tested apart from shape inference.
#pragma once

#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "nxrt/graph/ir.hpp"

namespace nxrt::graph::testing {

// A dim written as a number or a symbol.
using D = std::variant<int64_t, SymbolId>;

class TestGraph {
 public:
  Graph graph;

  SymbolId Declared(const std::string& name) { return graph.DeclareSymbol(name); }
  SymbolId Minted(const std::string& name) {
    return graph.AddSymbol(Symbol{name, SymbolOrigin::kMinted, {}});
  }
  // A derived symbol with a derivation record from each source.
  SymbolId Derived(const std::string& name, std::initializer_list<SymbolId> sources) {
    const SymbolId id = graph.AddSymbol(Symbol{name, SymbolOrigin::kDerived, {}});
    for (SymbolId source : sources) graph.lineage.derivations.emplace_back(id, source);
    return id;
  }
  void Unify(SymbolId a, SymbolId b) { graph.lineage.unifications.emplace_back(a, b); }
  // Marks every symbol added from now on as minted by inference.
  void StartInference() {
    graph.inference_symbol_floor = static_cast<uint32_t>(graph.symbols.size());
  }

  static Shape MakeShape(std::initializer_list<D> dims) {
    Shape shape;
    for (const D& d : dims) {
      shape.push_back(std::holds_alternative<int64_t>(d) ? Dim::Static(std::get<int64_t>(d))
                                                         : Dim::Symbolic(std::get<SymbolId>(d)));
    }
    return shape;
  }

  ValueId Value(const std::string& name, std::initializer_list<D> dims) {
    graph::Value v;
    v.name = name;
    v.dtype = DataType::kFloat32;
    v.shape = MakeShape(dims);
    return graph.AddValue(std::move(v));
  }
  // An intermediate the model does not declare: inference gives its type
  // and shape.
  ValueId Unshaped(const std::string& name) {
    graph::Value v;
    v.name = name;
    return graph.AddValue(std::move(v));
  }
  ValueId Input(const std::string& name, std::initializer_list<D> dims) {
    const ValueId id = Value(name, dims);
    graph.value(id).is_graph_input = true;
    graph.inputs.push_back(id);
    return id;
  }
  ValueId Output(const std::string& name, std::initializer_list<D> dims) {
    const ValueId id = Value(name, dims);
    graph.outputs.push_back(id);
    return id;
  }

  ValueId Int64s(const std::string& name, std::vector<int64_t> values) {
    std::vector<std::byte> bytes(values.size() * sizeof(int64_t));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    graph::Value v;
    v.name = name;
    v.dtype = DataType::kInt64;
    v.initializer = graph.weights->AddOwned(DataType::kInt64, {static_cast<int64_t>(values.size())},
                                            std::move(bytes));
    return graph.AddValue(std::move(v));
  }

  NodeId Node(const std::string& op_type, const std::string& domain, const std::string& name,
              std::vector<std::optional<ValueId>> inputs,
              std::vector<std::optional<ValueId>> outputs) {
    graph::Node n;
    n.op_type = op_type;
    n.domain = domain;
    n.name = name;
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    return graph.AddNode(std::move(n));
  }
  NodeId Op(const std::string& op_type, const std::string& name,
            std::vector<std::optional<ValueId>> inputs,
            std::vector<std::optional<ValueId>> outputs) {
    return Node(op_type, "", name, std::move(inputs), std::move(outputs));
  }

  // An attention node with its KV tensors laid out [batch, 2, seq, 64].
  struct Attention {
    NodeId node;
    ValueId past_key, past_value, present_key, present_value;
  };

  // com.microsoft GroupQueryAttention: q, k, v, past_key, past_value,
  // seqlens_k (when `with_seqlens_k`), total_sequence_length.
  Attention Gqa(const std::string& name, D batch, D past_seq, D present_seq, bool with_seqlens_k) {
    Attention a = KvTensors(name, batch, past_seq, present_seq);
    const ValueId q = Value(name + ".q", {batch, 1, 512});
    const ValueId kv = Value(name + ".kv", {batch, 1, 128});
    std::optional<ValueId> seqlens;
    if (with_seqlens_k) seqlens = Value(name + ".seqlens_k", {batch});
    const ValueId total = Value(name + ".total_len", {});
    const ValueId out = Value(name + ".out", {batch, 1, 512});
    a.node = Node("GroupQueryAttention", "com.microsoft", name,
                  {q, kv, kv, a.past_key, a.past_value, seqlens, total},
                  {out, a.present_key, a.present_value});
    return a;
  }

  // Default-domain Attention: q, k, v, attn_mask (when given), past_key,
  // past_value.
  Attention DefaultAttention(const std::string& name, D batch, D past_seq, D present_seq,
                             std::optional<ValueId> mask) {
    Attention a = KvTensors(name, batch, past_seq, present_seq);
    const ValueId q = Value(name + ".q", {batch, 8, 1, 64});
    const ValueId kv = Value(name + ".kv", {batch, 2, 1, 64});
    const ValueId out = Value(name + ".out", {batch, 8, 1, 64});
    a.node = Node("Attention", "", name, {q, kv, kv, mask, a.past_key, a.past_value},
                  {out, a.present_key, a.present_value});
    return a;
  }

  // pkg.nxrt IndexShare: q, k, v, past_key, past_value, attention bias (when
  // given).
  Attention IndexShare(const std::string& name, D batch, D past_seq, D present_seq,
                       std::optional<ValueId> bias) {
    Attention a = KvTensors(name, batch, past_seq, present_seq);
    const ValueId q = Value(name + ".q", {batch, 8, 1, 64});
    const ValueId kv = Value(name + ".kv", {batch, 2, 1, 64});
    const ValueId out = Value(name + ".out", {batch, 8, 1, 64});
    a.node = Node("IndexShare", "pkg.nxrt", name, {q, kv, kv, a.past_key, a.past_value, bias},
                  {out, a.present_key, a.present_value});
    return a;
  }

 private:
  Attention KvTensors(const std::string& name, D batch, D past_seq, D present_seq) {
    Attention a;
    a.past_key = Value(name + ".cache_k", {batch, 2, past_seq, 64});
    a.past_value = Value(name + ".cache_v", {batch, 2, past_seq, 64});
    a.present_key = Value(name + ".next_k", {batch, 2, present_seq, 64});
    a.present_value = Value(name + ".next_v", {batch, 2, present_seq, 64});
    return a;
  }
};

}  // namespace nxrt::graph::testing
