#include "session/constant_folding.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "nxrt/graph/value_consumers.hpp"
#include "nxrt/session.hpp"
#include "nxrt/support/log.hpp"
#include "partitioner/qdq_fusion.hpp"

namespace nxrt::session {
namespace {

// Deterministic default-domain ops with tensor results that exporters leave
// on constants.
bool Folds(std::string_view op) {
  static const std::unordered_set<std::string_view> kOps = {
      "Abs",      "Add",       "And",        "Cast",      "Concat",    "ConstantOfShape",
      "Div",      "Equal",     "Expand",     "Flatten",   "Gather",    "Greater",
      "Identity", "Less",      "MatMul",     "Max",       "Min",       "Mul",
      "Neg",      "Not",       "Or",         "Pow",       "Range",     "Reciprocal",
      "ReduceL2", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceSum", "Reshape",
      "Shape",    "Size",      "Slice",      "Split",     "Sqrt",      "Squeeze",
      "Sub",      "Tile",      "Transpose",  "Unsqueeze", "Where"};
  return kOps.contains(op);
}

struct Plan {
  std::vector<bool> folded;             // by node id
  std::vector<graph::ValueId> results;  // folded values read by what stays
};

// A DequantizeLinear of constants folds unless a reader may take it into a
// QDQ fusion (an integer kernel reads the 8-bit weights); the float weights
// it leaves are what the graph computes on every run.
bool DequantizeFolds(const graph::Graph& graph, const graph::ValueConsumers& consumers,
                     const graph::Node& node) {
  if (node.op_type != "DequantizeLinear" || !node.outputs[0]) return false;
  const auto readers = consumers.Of(*node.outputs[0]);
  return std::none_of(readers.begin(), readers.end(), [&](const graph::ValueConsumer& reader) {
    const graph::Node& r = graph.node(reader.node);
    return !r.is_default_domain() || partitioner::QdqFusionMayTake(r.op_type);
  });
}

// The nodes that fold, in order, and which of their results the rest of
// the graph reads.
Plan PlanFolding(const graph::Graph& graph) {
  Plan plan;
  plan.folded.assign(graph.nodes.size(), false);
  const graph::ValueConsumers consumers(graph);
  std::unordered_set<uint32_t> outputs;
  for (graph::ValueId id : graph.outputs) outputs.insert(id.index);
  std::unordered_set<uint32_t> constant;
  for (size_t v = 0; v < graph.values.size(); ++v) {
    if (graph.values[v].is_constant()) constant.insert(static_cast<uint32_t>(v));
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const graph::Node& node = graph.nodes[n];
    if (!node.is_default_domain() || node.outputs.empty() ||
        !(Folds(node.op_type) || DequantizeFolds(graph, consumers, node))) {
      continue;
    }
    bool all_constant = !node.inputs.empty();
    for (const auto& input : node.inputs) {
      if (input && !constant.contains(input->index)) all_constant = false;
    }
    for (const auto& output : node.outputs) {
      if (!output || outputs.contains(output->index)) all_constant = false;
    }
    if (!all_constant) continue;
    plan.folded[n] = true;
    for (const auto& output : node.outputs) constant.insert(output->index);
  }
  const std::unordered_set<std::string> outer_reads = graph::OuterScopeReads(graph);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (!plan.folded[n]) continue;
    for (const auto& output : graph.nodes[n].outputs) {
      bool read_by_rest = outer_reads.contains(graph.value(*output).name);
      for (const graph::ValueConsumer& reader : consumers.Of(*output)) {
        read_by_rest = read_by_rest || !plan.folded[reader.node.index];
      }
      if (read_by_rest) plan.results.push_back(*output);
    }
  }
  return plan;
}

// The folded nodes as a graph of their own: their constant inputs as
// initializers, the results the rest reads as its outputs.
graph::Graph FoldedGraph(const graph::Graph& graph, const Plan& plan) {
  graph::Graph folded;
  folded.name = graph.name + " constants";
  folded.model_path = graph.model_path;
  folded.opset_imports = graph.opset_imports;
  folded.weights = graph.weights;
  std::unordered_map<uint32_t, graph::ValueId> ids;
  const auto map_value = [&](graph::ValueId id) {
    if (auto it = ids.find(id.index); it != ids.end()) return it->second;
    const graph::Value& value = graph.value(id);
    graph::Value copy;
    copy.name = value.name;
    copy.kind = value.kind;
    copy.dtype = value.dtype;
    if (value.is_constant()) {
      copy.initializer = value.initializer;
      copy.shape = value.shape;
    }
    return ids[id.index] = folded.AddValue(std::move(copy));
  };
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (!plan.folded[n]) continue;
    graph::Node node = graph.nodes[n];
    for (auto& input : node.inputs) {
      if (input) input = map_value(*input);
    }
    for (auto& output : node.outputs) {
      if (output) output = map_value(*output);
    }
    folded.AddNode(std::move(node));
  }
  for (graph::ValueId result : plan.results) folded.outputs.push_back(map_value(result));
  return folded;
}

// Folds the constant nodes of `graph` alone; returns how many folded.
size_t FoldGraph(graph::Graph& graph, const std::shared_ptr<Environment>& environment,
                 const SessionOptions& options) {
  const Plan plan = PlanFolding(graph);
  if (plan.results.empty()) return 0;
  SessionOptions fold_options;
  fold_options.providers = options.providers;
  fold_options.rewrite_graph = false;
  fold_options.device_graphs = false;
  fold_options.memory_limit_bytes = kFoldedBytesLimit;
  auto session = Session::Create(environment, FoldedGraph(graph, plan), fold_options);
  Result<std::vector<Tensor>> results = session.ok()
                                            ? (*session)->Run(std::span<const NamedTensor>{})
                                            : Result<std::vector<Tensor>>(session.status());
  if (!results.ok()) {
    GetLogger()->debug("{}: constants left unfolded: {}", graph.model_path,
                       results.status().message());
    return 0;
  }
  size_t bytes = 0;
  for (const Tensor& tensor : *results) {
    if (tensor.dtype() == graph::DataType::kString || tensor.memory() != MemoryKind::kHost) {
      return 0;
    }
    bytes += tensor.byte_size();
  }
  if (bytes > kFoldedBytesLimit) return 0;
  for (size_t i = 0; i < plan.results.size(); ++i) {
    const Tensor& tensor = (*results)[i];
    std::vector<std::byte> data(tensor.byte_size());
    if (!data.empty()) std::memcpy(data.data(), tensor.data(), data.size());
    graph::Value& value = graph.value(plan.results[i]);
    value.initializer = graph.weights->AddOwned(tensor.dtype(), tensor.shape(), std::move(data));
    value.producer = graph::NodeId();
    value.kind = graph::ValueKind::kTensor;
    value.dtype = tensor.dtype();
    value.shape = graph::Shape();
    for (int64_t d : tensor.shape()) value.shape->push_back(graph::Dim::Static(d));
  }
  size_t count = 0;
  for (bool folded : plan.folded) count += folded ? 1 : 0;
  graph.RemoveNodes(plan.folded);
  return count;
}

// The outer-scope values of `body` that `enclosing` holds as constants,
// folded ones among them, made constants of the body, as the loader makes
// those of the model: the body can then fold what reads them.
void AdoptEnclosingConstants(graph::Graph& body, const graph::Graph& enclosing) {
  for (graph::Value& value : body.values) {
    if (!value.is_outer_scope) continue;
    const std::optional<graph::ValueId> outer = enclosing.FindValue(value.name);
    if (!outer) continue;
    const graph::Value& source = enclosing.value(*outer);
    const bool static_shape =
        source.shape && std::all_of(source.shape->begin(), source.shape->end(),
                                    [](const graph::Dim& d) { return d.is_static(); });
    if (!source.is_constant() || !static_shape) continue;
    value.is_outer_scope = false;
    value.initializer = source.initializer;
    value.kind = source.kind;
    value.dtype = source.dtype;
    value.shape = source.shape;
  }
}

// Folds `graph`, then each body below it, outermost first.
size_t FoldGraphAndBodies(graph::Graph& graph, const std::shared_ptr<Environment>& environment,
                          const SessionOptions& options) {
  size_t count = FoldGraph(graph, environment, options);
  const auto fold_body = [&](graph::Graph& body) {
    AdoptEnclosingConstants(body, graph);
    count += FoldGraphAndBodies(body, environment, options);
  };
  for (graph::Node& node : graph.nodes) {
    for (graph::Attribute& attribute : node.attributes) {
      if (attribute.graph) fold_body(*attribute.graph);
      for (const std::shared_ptr<graph::Graph>& body : attribute.graphs) {
        if (body) fold_body(*body);
      }
    }
  }
  return count;
}

}  // namespace

std::vector<std::string> FoldConstants(graph::Graph& graph,
                                       const std::shared_ptr<Environment>& environment,
                                       const SessionOptions& options) {
  const size_t count = FoldGraphAndBodies(graph, environment, options);
  if (count == 0) return {};
  return {std::to_string(count) + " node" + (count == 1 ? "" : "s") +
          " of constants folded into initializers at load"};
}

}  // namespace nxrt::session
