#include <string>
#include <unordered_set>
#include <vector>

#include "nxrt/graph/graph_rewrites.hpp"

namespace nxrt::graph {
namespace {

struct Made {
  size_t constants = 0;
  size_t identities = 0;
};

// `node`'s output made the initializer `weight`, of `dtype` and `shape`.
void MakeInitializer(Graph& graph, const Node& node, WeightRef weight, DataType dtype,
                     Shape shape) {
  Value& out = graph.value(*node.outputs[0]);
  out.initializer = weight;
  out.producer = NodeId();
  out.kind = ValueKind::kTensor;
  out.dtype = dtype;
  out.shape = std::move(shape);
}

// The Constant nodes, and the Identity nodes of constants, of `graph` and of
// every body below it made initializers; adds how many to `made`. Nodes are
// in topological order, so an Identity of a Constant goes too.
void MakeInitializers(Graph& graph, Made& made) {
  for (Node& node : graph.nodes) {
    for (Attribute& attribute : node.attributes) {
      if (attribute.graph) MakeInitializers(*attribute.graph, made);
      for (const std::shared_ptr<Graph>& body : attribute.graphs) {
        if (body) MakeInitializers(*body, made);
      }
    }
  }
  std::unordered_set<uint32_t> outputs;
  for (ValueId id : graph.outputs) outputs.insert(id.index);
  std::vector<bool> removed(graph.nodes.size(), false);
  bool any = false;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    if (!node.is_default_domain() || node.outputs.size() != 1 || !node.outputs[0] ||
        outputs.contains(node.outputs[0]->index)) {
      continue;
    }
    if (node.op_type == "Constant") {
      const Attribute* value = node.FindAttribute("value");
      if (value == nullptr || value->type != AttributeType::kTensor || !value->tensor) continue;
      const TensorData& data = graph.weights->Get(*value->tensor);
      if (data.dtype == DataType::kString) continue;
      Shape shape;
      for (int64_t d : data.dims) shape.push_back(Dim::Static(d));
      MakeInitializer(graph, node, *value->tensor, data.dtype, std::move(shape));
      ++made.constants;
    } else if (node.op_type == "Identity" && node.inputs.size() == 1 && node.inputs[0]) {
      const Value& in = graph.value(*node.inputs[0]);
      if (!in.is_constant() || in.kind != ValueKind::kTensor || !in.shape) continue;
      MakeInitializer(graph, node, *in.initializer, in.dtype, *in.shape);
      ++made.identities;
    } else {
      continue;
    }
    removed[n] = true;
    any = true;
  }
  if (any) graph.RemoveNodes(removed);
}

std::string Nodes(size_t count, const char* what) {
  return std::to_string(count) + " " + what + " node" + (count == 1 ? "" : "s");
}

}  // namespace

std::vector<std::string> ConstantNodesToInitializers(Graph& graph) {
  Made made;
  MakeInitializers(graph, made);
  if (made.constants + made.identities == 0) return {};
  std::string line;
  if (made.constants > 0) line = Nodes(made.constants, "Constant");
  if (made.identities > 0) {
    line += (line.empty() ? "" : " and ") + Nodes(made.identities, "Identity") + " of constants";
  }
  return {line + " made initializers, which kernels prepare once"};
}

}  // namespace nxrt::graph
