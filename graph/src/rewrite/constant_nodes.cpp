#include <string>
#include <unordered_set>
#include <vector>

#include "nxrt/graph/graph_rewrites.hpp"

namespace nxrt::graph {

std::vector<std::string> ConstantNodesToInitializers(Graph& graph) {
  std::unordered_set<uint32_t> outputs;
  for (ValueId id : graph.outputs) outputs.insert(id.index);
  std::vector<bool> removed(graph.nodes.size(), false);
  size_t count = 0;
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
    ++count;
  }
  if (count == 0) return {};
  graph.RemoveNodes(removed);
  return {std::to_string(count) + " Constant node" + (count == 1 ? "" : "s") +
          " made initializers, which kernels prepare once"};
}

}  // namespace nxrt::graph
