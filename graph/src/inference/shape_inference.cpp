#include "nxrt/graph/shape_inference.hpp"

#include <deque>
#include <optional>
#include <vector>

#include "inference/input_types.hpp"
#include "inference/known_values.hpp"
#include "inference/node_context.hpp"
#include "inference/onnx_schema_fallback.hpp"
#include "inference/rule_registry.hpp"
#include "inference/symbol_interner.hpp"
#include "nxrt/support/log.hpp"

namespace nxrt::graph {
namespace {

using inference::KnownValues;
using inference::NodeContext;
using inference::SymbolInterner;

// What node `node` reads: its inputs, and the values of `graph` its bodies
// read from outer scope (a body is inferred with the node, so their shapes
// must be known by then).
std::vector<ValueId> ValuesRead(const Graph& graph, const Node& node) {
  std::vector<ValueId> read;
  for (const auto& in : node.inputs) {
    if (in) read.push_back(*in);
  }
  auto add_body = [&](const Graph& body) {
    for (const Value& v : body.values) {
      if (!v.is_outer_scope) continue;
      if (std::optional<ValueId> outer = graph.FindValue(v.name)) read.push_back(*outer);
    }
  };
  for (const Attribute& a : node.attributes) {
    if (a.graph) add_body(*a.graph);
    for (const auto& body : a.graphs) add_body(*body);
  }
  return read;
}

// Nodes in an order where every producer precedes its consumers; nodes left
// over by a cycle keep their file order at the end.
std::vector<NodeId> TopologicalOrder(const Graph& graph) {
  const size_t n = graph.nodes.size();
  std::vector<uint32_t> pending(n, 0);
  std::vector<std::vector<uint32_t>> consumers(graph.values.size());
  for (uint32_t i = 0; i < n; ++i) {
    for (ValueId in : ValuesRead(graph, graph.nodes[i])) {
      if (in.index >= graph.values.size()) continue;
      const NodeId producer = graph.values[in.index].producer;
      if (producer.valid() && producer.index != i) {
        ++pending[i];
        consumers[in.index].push_back(i);
      }
    }
  }
  std::vector<NodeId> order;
  std::vector<bool> placed(n, false);
  std::deque<uint32_t> ready;
  for (uint32_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  while (!ready.empty()) {
    const uint32_t i = ready.front();
    ready.pop_front();
    order.push_back(NodeId{i});
    placed[i] = true;
    for (const auto& out : graph.nodes[i].outputs) {
      if (!out || out->index >= consumers.size()) continue;
      for (uint32_t c : consumers[out->index]) {
        if (--pending[c] == 0) ready.push_back(c);
      }
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (!placed[i]) order.push_back(NodeId{i});
  }
  return order;
}

void TrackInitializers(Graph& graph, KnownValues& known) {
  for (uint32_t i = 0; i < graph.values.size(); ++i) {
    Value& v = graph.values[i];
    if (!v.initializer) continue;
    const TensorData& t = graph.weights->Get(*v.initializer);
    if (v.dtype == DataType::kUndefined) v.dtype = t.dtype;
    if (!v.is_graph_input || !v.shape) {
      Shape shape;
      for (int64_t d : t.dims) shape.push_back(Dim::Static(d));
      v.shape = std::move(shape);
    }
    // An overridable initializer's value is only a default.
    if (!v.is_constant()) continue;
    if (auto e = inference::ElementsOfTensor(t, known.max_elements())) known.Set(ValueId{i}, *e);
  }
}

Status InferNode(Graph& graph, NodeId id, SymbolInterner& symbols, KnownValues& known,
                 const ShapeInferenceOptions& options) {
  NXRT_RETURN_IF_ERROR(inference::CheckInputTypes(graph, id));
  NodeContext ctx(graph, id, symbols, known, options);
  const Node& node = graph.node(id);
  inference::ShapeRule rule = inference::Rules().Find(node.domain, node.op_type);
  Status status = rule != nullptr ? rule(ctx) : ctx.Unknown("no shape rule for this op");
  if (!status.ok() && status.code() != StatusCode::kUnsupported) return status;
  bool missing = false;
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    missing = missing || (ctx.output(i) != nullptr && !ctx.output(i)->shape);
  }
  if (missing && options.use_onnx_schema_fallback) {
    Status fallback = inference::InferWithOnnxSchema(ctx, known);
    if (!fallback.ok()) status = fallback;
  }
  NXRT_RETURN_IF_ERROR(ctx.CheckDeclaredDtypes());
  NXRT_RETURN_IF_ERROR(ctx.CheckOutputElementCounts());
  if (ctx.RestoreDeclaredShapes()) {
    GetLogger()->debug("shape inference left an output unknown: {}", status.message());
    if (options.fail_on_unknown_shape) {
      return Unsupported(status.message() + "; add a shape rule for this op or declare the shape");
    }
  }
  return Status::Ok();
}

}  // namespace

Status InferShapes(Graph& graph, const ShapeInferenceOptions& options) {
  if (!graph.inference_symbol_floor) {
    graph.inference_symbol_floor = static_cast<uint32_t>(graph.symbols.size());
  }
  SymbolInterner symbols(graph);
  KnownValues known(graph.values.size(), options.max_tracked_elements);
  TrackInitializers(graph, known);
  for (NodeId id : TopologicalOrder(graph)) {
    NXRT_RETURN_IF_ERROR(InferNode(graph, id, symbols, known, options));
  }
  return Status::Ok();
}

}  // namespace nxrt::graph
