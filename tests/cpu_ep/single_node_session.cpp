#include "single_node_session.hpp"

#include <gtest/gtest.h>

#include <utility>

namespace nxrt_test {

using nxrt::graph::DataType;

std::optional<nxrt::Tensor> RunSingleNode(const std::string& op, int64_t opset,
                                          const std::vector<NodeInput>& inputs,
                                          std::vector<nxrt::graph::Attribute> attributes,
                                          DataType output_dtype) {
  TensorNode node{.op = op, .opset = opset, .name = op};
  node.attributes = std::move(attributes);
  node.outputs = {output_dtype};
  for (const NodeInput& input : inputs) {
    // Borrowed: `inputs` outlives the run.
    node.inputs.push_back(
        {input.name, input.name.empty()
                         ? nxrt::Tensor()
                         : nxrt::Tensor::Borrow(input.dtype, input.dims,
                                                const_cast<std::byte*>(input.bytes.data()),
                                                input.bytes.size())});
  }
  auto outputs = RunTensorNode(std::move(node));
  if (!outputs.ok()) {
    ADD_FAILURE() << op << ": " << outputs.status().ToString();
    return std::nullopt;
  }
  return std::move(outputs->front());
}

std::vector<double> ValuesAsDouble(const nxrt::Tensor& tensor) {
  std::vector<double> values;
  if (tensor.dtype() == DataType::kFloat32) {
    for (float v : tensor.values<float>()) values.push_back(v);
  } else if (tensor.dtype() == DataType::kFloat64) {
    for (double v : tensor.values<double>()) values.push_back(v);
  } else {
    ADD_FAILURE() << "ValuesAsDouble: not a float32 or float64 tensor";
  }
  return values;
}

}  // namespace nxrt_test
