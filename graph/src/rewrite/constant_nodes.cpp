#include <string>
#include <unordered_set>
#include <vector>

#include "nxrt/graph/graph_rewrites.hpp"

namespace nxrt::graph {
namespace {

// The Constant nodes of `graph` and of every body below it made
// initializers; returns how many.
size_t MakeInitializers(Graph& graph) {
  size_t count = 0;
  for (Node& node : graph.nodes) {
    for (Attribute& attribute : node.attributes) {
      if (attribute.graph) count += MakeInitializers(*attribute.graph);
      for (const std::shared_ptr<Graph>& body : attribute.graphs) {
        if (body) count += MakeInitializers(*body);
      }
    }
  }
  std::unordered_set<uint32_t> outputs;
  for (ValueId id : graph.outputs) outputs.insert(id.index);
  std::vector<bool> removed(graph.nodes.size(), false);
  size_t made = 0;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    if (node.op_type != "Constant" || !node.is_default_domain() || node.outputs.size() != 1 ||
        !node.outputs[0] || outputs.contains(node.outputs[0]->index)) {
      continue;
    }
    const Attribute* value = node.FindAttribute("value");
    if (value == nullptr || value->type != AttributeType::kTensor || !value->tensor) continue;
    const TensorData& data = graph.weights->Get(*value->tensor);
    if (data.dtype == DataType::kString) continue;
    Value& out = graph.value(*node.outputs[0]);
    out.initializer = *value->tensor;
    out.producer = NodeId();
    out.kind = ValueKind::kTensor;
    out.dtype = data.dtype;
    out.shape = Shape();
    for (int64_t d : data.dims) out.shape->push_back(Dim::Static(d));
    removed[n] = true;
    ++made;
  }
  if (made > 0) graph.RemoveNodes(removed);
  return count + made;
}

}  // namespace

std::vector<std::string> ConstantNodesToInitializers(Graph& graph) {
  const size_t count = MakeInitializers(graph);
  if (count == 0) return {};
  return {std::to_string(count) + " Constant node" + (count == 1 ? "" : "s") +
          " made initializers, which kernels prepare once"};
}

}  // namespace nxrt::graph
