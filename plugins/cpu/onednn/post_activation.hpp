// The activation a fused convolution applies to its result before storing
// it, as oneDNN eltwise post-ops, so the activated tensor is written once.
//
// A fused Conv node names it as ONNX Runtime's com.microsoft FusedConv does:
// the string attribute "activation" and the floats "activation_params"
// (Clip: min, max; HardSigmoid: alpha, beta; LeakyRelu: alpha). nxrt's own
// pkg.nxrt FusedConv, which the host makes from a Conv and its Swish
// (Sigmoid and Mul) or HardSwish, adds those two names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <oneapi/dnnl/dnnl.hpp>

#include "nxrt/ep_sdk.hpp"

namespace nxrt::cpu::onednn {

struct PostActivation {
  enum class Kind : uint8_t {
    kNone,
    kRelu,
    kLeakyRelu,
    kClip,
    kSigmoid,
    kHardSigmoid,
    kTanh,
    kSwish,
    kHardSwish,
  };
  Kind kind = Kind::kNone;
  float alpha = 0.0f;
  float beta = 0.0f;

  bool operator==(const PostActivation&) const = default;
  bool none() const { return kind == Kind::kNone; }

  // Appends its eltwise post-ops to `ops`; nothing for kNone.
  void AppendTo(dnnl::post_ops& ops) const;
  // The same on `count` values in place, for the paths oneDNN does not run.
  template <typename T>
  void Apply(T* y, int64_t count) const;
};

// The activation of a fused Conv `node`: none for a plain Conv; nullopt,
// with the reason in `why`, for an activation this EP does not fuse.
std::optional<PostActivation> ReadPostActivation(const sdk::Node& node, std::string* why);

}  // namespace nxrt::cpu::onednn
