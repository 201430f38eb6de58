// The activation functions RNN, GRU and LSTM name in their `activations`
// attribute, with the alpha and beta some of them take. Each is applied in
// place to a row of gate pre-activations after the optional cell clip, which
// the ONNX spec puts on the input of every activation.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "isa_clones.hpp"
#include "vector_math.hpp"

namespace nxrt::cpu {

enum class ActivationKind {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus,
};

struct Activation {
  ActivationKind kind = ActivationKind::kTanh;
  float alpha = 0;
  float beta = 0;
};

// Resolves `names` (matched case-insensitively) into activations. The
// `alphas` and `betas` lists are consumed in order by the activations that
// take a value; one left without falls back to its ONNX default. Returns
// the reason when a name is unknown.
std::optional<std::string> ResolveActivations(const std::vector<std::string>& names,
                                              const std::vector<float>& alphas,
                                              const std::vector<float>& betas,
                                              std::vector<Activation>* out);

// x[i] = activation(clamp(x[i], -clip, clip)) for i < n; clip is infinity
// when the node has none. Tanh and Sigmoid take vector_math.hpp's forms,
// so the float loops vectorise.
template <typename T>
NXRT_ISA_CLONES void ApplyActivation(const Activation& a, T clip, T* x, int64_t n) {
  const T alpha = static_cast<T>(a.alpha);
  const T beta = static_cast<T>(a.beta);
  auto each = [&](auto f) {
    for (int64_t i = 0; i < n; ++i) x[i] = f(std::clamp(x[i], -clip, clip));
  };
  switch (a.kind) {
    case ActivationKind::kRelu:
      return each([](T v) { return v > T(0) ? v : T(0); });
    case ActivationKind::kTanh:
      return each([](T v) { return math::Tanh(v); });
    case ActivationKind::kSigmoid:
      return each([](T v) { return math::Sigmoid(v); });
    case ActivationKind::kAffine:
      return each([&](T v) { return alpha * v + beta; });
    case ActivationKind::kLeakyRelu:
      return each([&](T v) { return v >= T(0) ? v : alpha * v; });
    case ActivationKind::kThresholdedRelu:
      return each([&](T v) { return v >= alpha ? v : T(0); });
    case ActivationKind::kScaledTanh:
      return each([&](T v) { return alpha * math::Tanh(beta * v); });
    case ActivationKind::kHardSigmoid:
      return each([&](T v) { return std::clamp(alpha * v + beta, T(0), T(1)); });
    case ActivationKind::kElu:
      return each([&](T v) { return v >= T(0) ? v : alpha * (std::exp(v) - T(1)); });
    case ActivationKind::kSoftsign:
      return each([](T v) { return v / (T(1) + std::abs(v)); });
    case ActivationKind::kSoftplus:
      // log1p(exp(v)) overflows for large v, where the result is v.
      return each([](T v) { return v > T(30) ? v : std::log1p(std::exp(v)); });
  }
}

}  // namespace nxrt::cpu
