#include "kernel_cache/constant_inputs.hpp"

#include <string>

namespace nxrt::kernel_cache {

Result<std::vector<nxrt_constant_input>> ResolveKernelConstantInputs(
    const graph::Graph& graph, graph::NodeId node_id, const graph::Node& node,
    std::span<const InputShape> shapes) {
  std::vector<nxrt_constant_input> constants;
  for (size_t index = 0; index < node.inputs.size(); ++index) {
    if (!node.inputs[index]) continue;
    const graph::Value& value = graph.value(*node.inputs[index]);
    if (!value.is_constant()) continue;
    if (!graph.weights || value.initializer->index >= graph.weights->size()) {
      return Internal(graph.Describe(node_id) + ": the bytes of initializer '" + value.name +
                      "' (input " + std::to_string(index) +
                      ") are not in the model's weight store; reload the model");
    }
    if (index >= shapes.size() || shapes[index].absent) {
      return Internal(graph.Describe(node_id) + ": no concrete shape was given for initializer '" +
                      value.name + "' (input " + std::to_string(index) +
                      "); the executor must resolve every input shape before making a kernel");
    }
    const graph::TensorData& data = graph.weights->Get(*value.initializer);
    const std::vector<int64_t>& dims = shapes[index].dims;
    constants.push_back(nxrt_constant_input{
        sizeof(nxrt_constant_input), index, static_cast<nxrt_dtype>(value.dtype), dims.size(),
        dims.empty() ? nullptr : dims.data(), data.bytes.data(), data.bytes.size(),
        /*bytes_persist=*/1});
  }
  return constants;
}

}  // namespace nxrt::kernel_cache
