#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "nxrt/graph/graph_rewrites.hpp"
#include "nxrt/graph/value_consumers.hpp"

namespace nxrt::graph {
namespace {

// How many node inputs of `graph` read each value.
std::unordered_map<uint32_t, int> ReadCounts(const Graph& graph) {
  std::unordered_map<uint32_t, int> reads;
  for (const Node& node : graph.nodes) {
    for (const auto& input : node.inputs) {
      if (input) ++reads[input->index];
    }
  }
  return reads;
}

// A float32 initializer that no run can replace, as a vector of doubles.
std::optional<std::vector<double>> ConstantFloats(const Graph& graph, ValueId id) {
  const Value& value = graph.value(id);
  if (!value.is_constant()) return std::nullopt;
  const TensorData& data = graph.weights->Get(*value.initializer);
  if (data.dtype != DataType::kFloat32) return std::nullopt;
  std::vector<float> floats(data.bytes.size() / sizeof(float));
  std::memcpy(floats.data(), data.bytes.data(), floats.size() * sizeof(float));
  return std::vector<double>(floats.begin(), floats.end());
}

bool IsVectorOf(const Graph& graph, ValueId id, int64_t length) {
  const TensorData& data = graph.weights->Get(*graph.value(id).initializer);
  return data.dims.size() == 1 && data.dims[0] == length;
}

// A new float32 initializer named after `base`, unique in the graph.
ValueId AddFloats(Graph& graph, const std::string& base, std::vector<int64_t> dims,
                  const std::vector<double>& values) {
  std::string name = base;
  for (int n = 2; graph.FindValue(name); ++n) name = base + "_" + std::to_string(n);
  std::vector<std::byte> bytes(values.size() * sizeof(float));
  for (size_t i = 0; i < values.size(); ++i) {
    const float f = static_cast<float>(values[i]);
    std::memcpy(bytes.data() + i * sizeof(float), &f, sizeof(float));
  }
  Value value;
  value.name = name;
  value.dtype = DataType::kFloat32;
  value.shape = Shape();
  for (int64_t d : dims) value.shape->push_back(Dim::Static(d));
  value.initializer =
      graph.weights->AddOwned(DataType::kFloat32, std::move(dims), std::move(bytes));
  return graph.AddValue(std::move(value));
}

bool InferenceMode(const Graph& graph, const Node& bn) {
  if (graph.OpsetFor("").value_or(0) < 7) return false;  // is_test and consumed_inputs
  const Attribute* spatial = bn.FindAttribute("spatial");
  const Attribute* training = bn.FindAttribute("training_mode");
  for (size_t i = 1; i < bn.outputs.size(); ++i) {
    if (bn.outputs[i]) return false;
  }
  return (spatial == nullptr || spatial->i == 1) && (training == nullptr || training->i == 0) &&
         bn.inputs.size() == 5;
}

}  // namespace

std::vector<std::string> FoldBatchNormalizationIntoConv(Graph& graph) {
  const std::unordered_set<std::string> outer_reads = OuterScopeReads(graph);
  std::unordered_set<uint32_t> outputs;
  for (ValueId id : graph.outputs) outputs.insert(id.index);
  const std::unordered_map<uint32_t, int> reads = ReadCounts(graph);

  std::vector<std::string> changes;
  std::vector<bool> removed(graph.nodes.size(), false);
  for (size_t b = 0; b < graph.nodes.size(); ++b) {
    const Node& bn = graph.nodes[b];
    if (bn.op_type != "BatchNormalization" || !bn.is_default_domain() || !bn.inputs[0] ||
        !InferenceMode(graph, bn)) {
      continue;
    }
    const ValueId between = *bn.inputs[0];
    const NodeId conv_id = graph.value(between).producer;
    if (!conv_id.valid() || reads.at(between.index) != 1 || outputs.contains(between.index) ||
        outer_reads.contains(graph.value(between).name)) {
      continue;
    }
    const Node& conv = graph.node(conv_id);
    if (conv.op_type != "Conv" || !conv.is_default_domain() || conv.inputs.size() < 2 ||
        !conv.inputs[1]) {
      continue;
    }
    const auto weights = ConstantFloats(graph, *conv.inputs[1]);
    if (!weights) continue;
    const std::vector<int64_t> w_dims =
        graph.weights->Get(*graph.value(*conv.inputs[1]).initializer).dims;
    if (w_dims.size() < 3 || w_dims[0] <= 0) continue;
    const int64_t maps = w_dims[0];
    const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2];
    std::optional<std::vector<double>> bias =
        has_bias ? ConstantFloats(graph, *conv.inputs[2]) : std::vector<double>(maps, 0.0);
    if (!bias || (has_bias && !IsVectorOf(graph, *conv.inputs[2], maps))) continue;
    std::vector<std::vector<double>> stats;  // scale, shift, mean, var
    for (size_t i = 1; i < 5; ++i) {
      if (!bn.inputs[i]) break;
      auto v = ConstantFloats(graph, *bn.inputs[i]);
      if (!v || !IsVectorOf(graph, *bn.inputs[i], maps)) break;
      stats.push_back(std::move(*v));
    }
    if (stats.size() != 4) continue;

    const Attribute* epsilon_attribute = bn.FindAttribute("epsilon");
    const double epsilon = epsilon_attribute ? epsilon_attribute->f : 1e-5;
    std::vector<double> folded_w = *weights;
    std::vector<double> folded_b(maps);
    const size_t per_map = folded_w.size() / static_cast<size_t>(maps);
    for (int64_t m = 0; m < maps; ++m) {
      const double s = stats[0][m] / std::sqrt(stats[3][m] + epsilon);
      for (size_t k = 0; k < per_map; ++k) folded_w[m * per_map + k] *= s;
      folded_b[m] = ((*bias)[m] - stats[2][m]) * s + stats[1][m];
    }
    const std::string w_name = graph.value(*conv.inputs[1]).name;
    const ValueId new_w = AddFloats(graph, w_name + "/folded", w_dims, folded_w);
    const ValueId new_b = AddFloats(graph, conv.name + "/folded_bias", {maps}, folded_b);
    Node& fused = graph.node(conv_id);
    fused.inputs.resize(3);
    fused.inputs[1] = new_w;
    fused.inputs[2] = new_b;
    fused.outputs[0] = graph.nodes[b].outputs[0];
    removed[b] = true;
    changes.push_back("BatchNormalization '" + graph.nodes[b].name + "' folded into Conv '" +
                      fused.name + "'");
  }
  if (!changes.empty()) graph.RemoveNodes(removed);
  return changes;
}

}  // namespace nxrt::graph
