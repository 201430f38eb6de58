#include "partitioner/conv_fusion.hpp"

#include <limits>
#include <optional>

#include "partitioner/fusion_chain.hpp"

namespace nxrt::partitioner {
namespace {

// An activation after a Conv: the fused node's domain and its settings.
struct Activation {
  const char* domain;
  std::string name;
  std::vector<float> params;
  std::vector<graph::NodeId> absorbed;
};

std::shared_ptr<graph::Node> FusedFrom(const graph::Node& conv, const graph::Node& last,
                                       const char* domain, const char* op,
                                       const Activation* activation) {
  auto fused = std::make_shared<graph::Node>(conv);
  fused->op_type = op;
  fused->domain = domain;
  fused->outputs = {last.outputs[0]};
  if (activation) {
    fused->attributes.push_back(StringAttribute("activation", activation->name));
    if (!activation->params.empty()) {
      fused->attributes.push_back(FloatsAttribute("activation_params", activation->params));
    }
  }
  return fused;
}

float FloatAttribute(const graph::Node& node, const char* name, float fallback) {
  const graph::Attribute* a = node.FindAttribute(name);
  return a ? a->f : fallback;
}

// Clip's bounds when they are known at load: attributes before opset 11,
// constant inputs (or none, for no bound) since.
std::optional<std::vector<float>> ClipBounds(const graph::Graph& graph, const graph::Node& clip) {
  constexpr float kLowest = std::numeric_limits<float>::lowest();
  constexpr float kMax = std::numeric_limits<float>::max();
  if (graph.OpsetFor("").value_or(0) < 11) {
    return std::vector<float>{FloatAttribute(clip, "min", kLowest),
                              FloatAttribute(clip, "max", kMax)};
  }
  std::vector<float> bounds{kLowest, kMax};
  for (size_t i = 1; i < 3; ++i) {
    if (i >= clip.inputs.size() || !clip.inputs[i]) continue;
    const std::optional<float> bound = FloatScalar(graph, clip.inputs[i]);
    if (!bound) return std::nullopt;
    bounds[i - 1] = *bound;
  }
  return bounds;
}

// The activation that reads the Conv's result alone, if any. ONNX Runtime's
// FusedConv has Relu, LeakyRelu, Clip, Sigmoid, HardSigmoid and Tanh;
// Swish (Sigmoid and Mul of the result) and HardSwish are nxrt's.
std::optional<Activation> ActivationAfter(const graph::Graph& graph, graph::NodeId conv,
                                          const ChainRules& rules) {
  if (const auto swish = rules.GatedBy(conv, "Sigmoid", "Mul")) {
    return Activation{"pkg.nxrt", "Swish", {}, {swish->first, swish->second}};
  }
  for (const char* op : {"Relu", "LeakyRelu", "Clip", "Sigmoid", "HardSigmoid", "Tanh"}) {
    const std::optional<graph::NodeId> next = rules.Next(conv, op);
    if (!next) continue;
    const graph::Node& node = graph.node(*next);
    Activation activation{"com.microsoft", op, {}, {*next}};
    if (activation.name == "LeakyRelu") {
      activation.params = {FloatAttribute(node, "alpha", 0.01f)};
    } else if (activation.name == "HardSigmoid") {
      activation.params = {FloatAttribute(node, "alpha", 0.2f), FloatAttribute(node, "beta", 0.5f)};
    } else if (activation.name == "Clip") {
      std::optional<std::vector<float>> bounds = ClipBounds(graph, node);
      if (!bounds) return std::nullopt;
      activation.params = std::move(*bounds);
    }
    return activation;
  }
  if (const std::optional<graph::NodeId> hard_swish = rules.Next(conv, "HardSwish")) {
    return Activation{"pkg.nxrt", "HardSwish", {}, {*hard_swish}};
  }
  return std::nullopt;
}

std::vector<FusionCandidate> ConvCandidates(const graph::Graph& graph, graph::NodeId conv_id,
                                            const ChainRules& rules) {
  const graph::Node& conv = graph.node(conv_id);
  const std::optional<Activation> activation = ActivationAfter(graph, conv_id, rules);
  const bool relu = activation && activation->name == "Relu";
  const graph::NodeId last = activation ? activation->absorbed.back() : conv_id;
  std::vector<FusionCandidate> candidates;
  // The pool reads the activation's result alone (a Relu's) or the Conv's.
  const std::optional<graph::NodeId> pool =
      !activation || relu ? rules.Next(last, "MaxPool") : std::nullopt;
  if (pool) {
    const graph::Node& pool_node = graph.node(*pool);
    auto fused = FusedFrom(conv, pool_node, "pkg.nxrt", "ConvPool", relu ? &*activation : nullptr);
    for (graph::Attribute a : pool_node.attributes) {
      a.name = "pool_" + a.name;
      fused->attributes.push_back(std::move(a));
    }
    FusionCandidate& c = candidates.emplace_back(FusionCandidate{std::move(fused), {}});
    if (relu) c.absorbed.push_back(last);
    c.absorbed.push_back(*pool);
  }
  if (activation) {
    candidates.push_back(
        {FusedFrom(conv, graph.node(last), activation->domain, "FusedConv", &*activation),
         activation->absorbed});
  }
  return candidates;
}

}  // namespace

std::vector<std::string> FuseConvChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition) {
  return FuseChains(graph, views, providers, capture_plan, partition, "Conv",
                    [&](graph::NodeId head, const ChainRules& rules) {
                      return ConvCandidates(graph, head, rules);
                    });
}

}  // namespace nxrt::partitioner
