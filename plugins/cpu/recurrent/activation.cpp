#include "recurrent/activation.hpp"

#include <cctype>

namespace nxrt::cpu {
namespace {

struct ActivationSpec {
  const char* name;  // lower case
  ActivationKind kind;
  int takes;  // 0: no value, 1: alpha, 2: alpha and beta
  float alpha;
  float beta;
};

// The ONNX defaults of the valued ones are those of the ops of the same
// name (Affine and ScaledTanh: the identity scaling).
constexpr ActivationSpec kSpecs[] = {
    {"relu", ActivationKind::kRelu, 0, 0.0f, 0.0f},
    {"tanh", ActivationKind::kTanh, 0, 0.0f, 0.0f},
    {"sigmoid", ActivationKind::kSigmoid, 0, 0.0f, 0.0f},
    {"affine", ActivationKind::kAffine, 2, 1.0f, 0.0f},
    {"leakyrelu", ActivationKind::kLeakyRelu, 1, 0.01f, 0.0f},
    {"thresholdedrelu", ActivationKind::kThresholdedRelu, 1, 1.0f, 0.0f},
    {"scaledtanh", ActivationKind::kScaledTanh, 2, 1.0f, 1.0f},
    {"hardsigmoid", ActivationKind::kHardSigmoid, 2, 0.2f, 0.5f},
    {"elu", ActivationKind::kElu, 1, 1.0f, 0.0f},
    {"softsign", ActivationKind::kSoftsign, 0, 0.0f, 0.0f},
    {"softplus", ActivationKind::kSoftplus, 0, 0.0f, 0.0f},
};

std::string Lower(const std::string& text) {
  std::string lower = text;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

}  // namespace

std::optional<std::string> ResolveActivations(const std::vector<std::string>& names,
                                              const std::vector<float>& alphas,
                                              const std::vector<float>& betas,
                                              std::vector<Activation>* out) {
  out->clear();
  size_t next_alpha = 0;
  size_t next_beta = 0;
  for (const std::string& name : names) {
    const std::string lower = Lower(name);
    const ActivationSpec* spec = nullptr;
    for (const ActivationSpec& s : kSpecs) {
      if (lower == s.name) spec = &s;
    }
    if (spec == nullptr) return "activation '" + name + "' not implemented";
    Activation a{spec->kind, spec->alpha, spec->beta};
    if (spec->takes >= 1 && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (spec->takes == 2 && next_beta < betas.size()) a.beta = betas[next_beta++];
    out->push_back(a);
  }
  return std::nullopt;
}

}  // namespace nxrt::cpu
