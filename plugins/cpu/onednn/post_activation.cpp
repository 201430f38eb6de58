#include "onednn/post_activation.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace nxrt::cpu::onednn {
namespace {

using Kind = PostActivation::Kind;

struct Named {
  const char* name;
  Kind kind;
  size_t params;  // how many activation_params it reads
  float alpha;    // their defaults
  float beta;
};

// ONNX Runtime's defaults: HardSigmoid's as ONNX's op, LeakyRelu's 0.01,
// Clip unbounded.
constexpr Named kNamed[] = {
    {"Relu", Kind::kRelu, 0, 0.0f, 0.0f},
    {"LeakyRelu", Kind::kLeakyRelu, 1, 0.01f, 0.0f},
    {"Clip", Kind::kClip, 2, -INFINITY, INFINITY},
    {"Sigmoid", Kind::kSigmoid, 0, 0.0f, 0.0f},
    {"HardSigmoid", Kind::kHardSigmoid, 2, 0.2f, 0.5f},
    {"Tanh", Kind::kTanh, 0, 0.0f, 0.0f},
    {"Swish", Kind::kSwish, 1, 1.0f, 0.0f},
    {"HardSwish", Kind::kHardSwish, 0, 0.0f, 0.0f},
};

template <typename T>
T Logistic(T x) {
  return x >= T(0) ? T(1) / (T(1) + std::exp(-x)) : std::exp(x) / (T(1) + std::exp(x));
}

}  // namespace

void PostActivation::AppendTo(dnnl::post_ops& ops) const {
  using dnnl::algorithm;
  switch (kind) {
    case Kind::kNone:
      return;
    case Kind::kRelu:
      return ops.append_eltwise(1.0f, algorithm::eltwise_relu, 0.0f, 0.0f);
    case Kind::kLeakyRelu:
      return ops.append_eltwise(1.0f, algorithm::eltwise_relu, alpha, 0.0f);
    case Kind::kClip:
      return ops.append_eltwise(1.0f, algorithm::eltwise_clip, alpha, beta);
    case Kind::kSigmoid:
      return ops.append_eltwise(1.0f, algorithm::eltwise_logistic, 0.0f, 0.0f);
    case Kind::kHardSigmoid:
      // This oneDNN has no hard sigmoid: alpha x + beta, clipped to [0, 1].
      ops.append_eltwise(1.0f, algorithm::eltwise_linear, alpha, beta);
      return ops.append_eltwise(1.0f, algorithm::eltwise_clip, 0.0f, 1.0f);
    case Kind::kTanh:
      return ops.append_eltwise(1.0f, algorithm::eltwise_tanh, 0.0f, 0.0f);
    case Kind::kSwish:
      return ops.append_eltwise(1.0f, algorithm::eltwise_swish, alpha, 0.0f);
    case Kind::kHardSwish:
      return ops.append_eltwise(1.0f, algorithm::eltwise_hardswish, 0.0f, 0.0f);
  }
}

template <typename T>
void PostActivation::Apply(T* y, int64_t count) const {
  const T a = static_cast<T>(alpha);
  const T b = static_cast<T>(beta);
  const auto clip = [](T v, T low, T high) { return v < low ? low : (v > high ? high : v); };
  for (int64_t i = 0; i < count; ++i) {
    const T x = y[i];
    switch (kind) {
      case Kind::kNone:
        return;
      case Kind::kRelu:
        y[i] = x < T(0) ? T(0) : x;  // NaN stays NaN
        break;
      case Kind::kLeakyRelu:
        y[i] = x < T(0) ? a * x : x;
        break;
      case Kind::kClip:
        y[i] = clip(x, a, b);
        break;
      case Kind::kSigmoid:
        y[i] = Logistic(x);
        break;
      case Kind::kHardSigmoid:
        y[i] = clip(a * x + b, T(0), T(1));
        break;
      case Kind::kTanh:
        y[i] = std::tanh(x);
        break;
      case Kind::kSwish:
        y[i] = x * Logistic(a * x);
        break;
      case Kind::kHardSwish:
        y[i] = x * clip(x / T(6) + T(0.5), T(0), T(1));
        break;
    }
  }
}

template void PostActivation::Apply<float>(float*, int64_t) const;
template void PostActivation::Apply<double>(double*, int64_t) const;

std::optional<PostActivation> ReadPostActivation(const sdk::Node& node, std::string* why) {
  if (node.op_type() != "FusedConv") return PostActivation{};
  const std::string name = node.AttrString("activation", "");
  const std::vector<float> params = node.AttrFloats("activation_params");
  const bool nxrt_domain = node.domain() == "pkg.nxrt";
  for (const Named& named : kNamed) {
    if (name != named.name) continue;
    // ONNX Runtime's FusedConv has neither Swish nor HardSwish.
    if (!nxrt_domain && (named.kind == Kind::kSwish || named.kind == Kind::kHardSwish)) break;
    if (params.size() > named.params) {
      *why = "FusedConv: activation " + name + " takes " + std::to_string(named.params) +
             " activation_params, got " + std::to_string(params.size()) + "; give at most " +
             std::to_string(named.params);
      return std::nullopt;
    }
    PostActivation activation{named.kind, named.alpha, named.beta};
    if (!params.empty()) activation.alpha = params[0];
    if (params.size() > 1) activation.beta = params[1];
    return activation;
  }
  *why = "FusedConv: activation '" + name + "' is none this EP fuses (Relu, LeakyRelu, Clip, " +
         "Sigmoid, HardSigmoid and Tanh" + (nxrt_domain ? ", and Swish and HardSwish)" : ")") +
         "; give the Conv and its activation as separate nodes, or run the node on another "
         "provider";
  return std::nullopt;
}

}  // namespace nxrt::cpu::onednn
