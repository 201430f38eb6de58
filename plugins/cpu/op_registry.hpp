// The ops the CPU EP implements: for each op (domain and type; the default
// domain is ""), the first opset of its domain it is claimed at, a claim check that declines with a
// reason (dtype, attribute or opset not implemented), and a kernel factory. Each op family file
// registers its ops through one Register* function.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "nxrt/ep_sdk.hpp"

namespace nxrt::cpu {

class CpuKernel;

using ClaimFn = std::function<sdk::ClaimResult(const sdk::Node& node, int64_t opset,
                                               std::span<const nxrt_value_info> inputs)>;
using CreateFn = std::function<std::unique_ptr<CpuKernel>(
    const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t opset)>;

// For kernels that read what the SDK's Node does not wrap (tensor
// attributes) through the host table.
using CreateWithHostFn =
    std::function<std::unique_ptr<CpuKernel>(const sdk::Host& host, const sdk::Node& node,
                                             std::span<const nxrt_shape> inputs, int64_t opset)>;

struct OpDefinition {
  OpDefinition(int64_t since, ClaimFn claim_fn, CreateFn create_fn)
      : since_opset(since), claim(std::move(claim_fn)), create(std::move(create_fn)) {}
  OpDefinition(int64_t since, ClaimFn claim_fn, CreateWithHostFn create_fn)
      : since_opset(since), claim(std::move(claim_fn)), create_with_host(std::move(create_fn)) {}

  int64_t since_opset = 1;
  ClaimFn claim;
  CreateFn create;  // used unless create_with_host is set
  CreateWithHostFn create_with_host;
};

class OpRegistry {
 public:
  void Add(std::string op_type, OpDefinition definition, std::string domain = "");
  // nullptr when the op is not implemented.
  const OpDefinition* Find(std::string_view domain, std::string_view op_type) const;
  size_t size() const { return ops_.size(); }

 private:
  using Key = std::pair<std::string, std::string>;  // domain, op type
  struct KeyLess {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return Viewed(a) < Viewed(b);
    }
    // Keys of std::string and lookups of std::string_view compare as views.
    template <typename K>
    static std::pair<std::string_view, std::string_view> Viewed(const K& key) {
      return {key.first, key.second};
    }
  };
  std::map<Key, OpDefinition, KeyLess> ops_;
};

// Every op of every family, built on first use.
const OpRegistry& CpuOps();

// The op families.
void RegisterUnaryOps(OpRegistry& registry);
void RegisterBinaryOps(OpRegistry& registry);
void RegisterVariadicOps(OpRegistry& registry);
void RegisterCastOps(OpRegistry& registry);
void RegisterMatMulOps(OpRegistry& registry);
void RegisterIntegerMatMulOps(OpRegistry& registry);
void RegisterQLinearBinaryOps(OpRegistry& registry);
void RegisterQGemmOps(OpRegistry& registry);
void RegisterQLinearPoolOps(OpRegistry& registry);
void RegisterQLinearLookupOps(OpRegistry& registry);
void RegisterQLinearConcatOps(OpRegistry& registry);
void RegisterMatMulAddOps(OpRegistry& registry);
void RegisterMatMulNBitsOps(OpRegistry& registry);
void RegisterConvOps(OpRegistry& registry);
void RegisterIntegerConvOps(OpRegistry& registry);
void RegisterConvTransposeOps(OpRegistry& registry);
void RegisterConvPoolOps(OpRegistry& registry);
void RegisterCausalConvOps(OpRegistry& registry);
void RegisterDeformConvOps(OpRegistry& registry);
void RegisterPoolOps(OpRegistry& registry);
void RegisterNormalizationOps(OpRegistry& registry);
void RegisterDecoderNormOps(OpRegistry& registry);
void RegisterSoftmaxOps(OpRegistry& registry);
void RegisterReduceOps(OpRegistry& registry);
void RegisterShapeOps(OpRegistry& registry);
void RegisterDropoutOps(OpRegistry& registry);
void RegisterOptimizerOps(OpRegistry& registry);
void RegisterMovementOps(OpRegistry& registry);
void RegisterPadOps(OpRegistry& registry);
void RegisterConcatOps(OpRegistry& registry);
void RegisterIndexingOps(OpRegistry& registry);
void RegisterGeneratorOps(OpRegistry& registry);
void RegisterResizeOps(OpRegistry& registry);
void RegisterEinsumOps(OpRegistry& registry);
void RegisterQuantizeOps(OpRegistry& registry);
void RegisterDeterminantOps(OpRegistry& registry);
void RegisterLossOps(OpRegistry& registry);
void RegisterNonMaxSuppressionOps(OpRegistry& registry);
void RegisterAttentionOps(OpRegistry& registry);
void RegisterGroupQueryAttentionOps(OpRegistry& registry);
void RegisterFlexAttentionOps(OpRegistry& registry);
void RegisterRotaryOps(OpRegistry& registry);
void RegisterLinearAttentionOps(OpRegistry& registry);
void RegisterRecurrentOps(OpRegistry& registry);
void RegisterControlFlowOps(OpRegistry& registry);
void RegisterSequenceOps(OpRegistry& registry);
void RegisterOptionalOps(OpRegistry& registry);
void RegisterSignalOps(OpRegistry& registry);
void RegisterImageOps(OpRegistry& registry);
void RegisterImageDecoderOps(OpRegistry& registry);
void RegisterRandomOps(OpRegistry& registry);
void RegisterStringOps(OpRegistry& registry);
void RegisterTfIdfVectorizerOps(OpRegistry& registry);
void RegisterMlOps(OpRegistry& registry);

}  // namespace nxrt::cpu
