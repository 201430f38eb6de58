// Runs one node of the default domain through a session on the CPU EP, its
// inputs graph inputs bound at run time, so a test can check a kernel on
// inputs of its choosing against a reference it computes itself (the node
// case runner covers the fixed corpus cases). A shorthand over
// tensor_node_session.hpp for one output and inputs given as bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "nxrt/graph/ir.hpp"
#include "nxrt/tensor.hpp"
#include "tensor_node_session.hpp"

namespace nxrt_test {

struct NodeInput {
  std::string name;  // empty: an absent optional input
  nxrt::graph::DataType dtype = nxrt::graph::DataType::kUndefined;
  std::vector<int64_t> dims;
  std::vector<std::byte> bytes;
};

template <typename T>
NodeInput Input(const std::string& name, nxrt::graph::DataType dtype, std::vector<int64_t> dims,
                const std::vector<T>& values) {
  NodeInput input{name, dtype, std::move(dims), std::vector<std::byte>(values.size() * sizeof(T))};
  if (!values.empty()) std::memcpy(input.bytes.data(), values.data(), input.bytes.size());
  return input;
}

inline NodeInput AbsentInput() {
  return {};
}

// The node's one output (declared `output_dtype`), or nullopt with a test
// failure saying why the session could not be made or run.
std::optional<nxrt::Tensor> RunSingleNode(const std::string& op, int64_t opset,
                                          const std::vector<NodeInput>& inputs,
                                          std::vector<nxrt::graph::Attribute> attributes,
                                          nxrt::graph::DataType output_dtype);

// The values of a host tensor as double.
std::vector<double> ValuesAsDouble(const nxrt::Tensor& tensor);

}  // namespace nxrt_test
