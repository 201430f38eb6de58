// The benchmarks' probe of per-node cost: a chain of one-element float Adds,
// each adding the same constant to the previous result, built in the IR.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nxrt/graph/ir.hpp"

namespace nxrt_bench {

inline nxrt::graph::Graph AddChain(int nodes) {
  using nxrt::graph::DataType;
  using nxrt::graph::Dim;
  nxrt::graph::Graph g;
  g.model_path = "add_chain.onnx";
  g.opset_imports[""] = 17;
  g.weights = std::make_shared<nxrt::graph::WeightStore>();
  nxrt::graph::Value x;
  x.name = "x";
  x.dtype = DataType::kFloat32;
  x.shape = nxrt::graph::Shape{Dim::Static(1)};
  x.is_graph_input = true;
  g.inputs.push_back(g.AddValue(std::move(x)));
  const float one = 1.0f;
  std::vector<std::byte> bytes(sizeof(float));
  std::memcpy(bytes.data(), &one, sizeof(float));
  nxrt::graph::Value c;
  c.name = "c";
  c.dtype = DataType::kFloat32;
  c.shape = nxrt::graph::Shape{Dim::Static(1)};
  c.initializer = g.weights->AddOwned(DataType::kFloat32, {1}, std::move(bytes));
  const nxrt::graph::ValueId constant = g.AddValue(std::move(c));
  nxrt::graph::ValueId previous = g.inputs[0];
  for (int i = 0; i < nodes; ++i) {
    nxrt::graph::Value out;
    out.name = "a" + std::to_string(i);
    nxrt::graph::Node node;
    node.op_type = "Add";
    node.name = "add" + std::to_string(i);
    node.inputs = {previous, constant};
    node.outputs = {g.AddValue(std::move(out))};
    previous = *node.outputs[0];
    g.AddNode(std::move(node));
  }
  g.outputs.push_back(previous);
  return g;
}

}  // namespace nxrt_bench
