#include "op_registry.hpp"

namespace nxrt::cpu {

void OpRegistry::Add(std::string op_type, OpDefinition definition, std::string domain) {
  ops_.insert_or_assign(Key{std::move(domain), std::move(op_type)}, std::move(definition));
}

const OpDefinition* OpRegistry::Find(std::string_view domain, std::string_view op_type) const {
  auto it = ops_.find(std::pair<std::string_view, std::string_view>(domain, op_type));
  return it == ops_.end() ? nullptr : &it->second;
}

const OpRegistry& CpuOps() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    RegisterUnaryOps(r);
    RegisterBinaryOps(r);
    RegisterVariadicOps(r);
    RegisterCastOps(r);
    RegisterMatMulOps(r);
    RegisterIntegerMatMulOps(r);
    RegisterQLinearBinaryOps(r);
    RegisterQGemmOps(r);
    RegisterQLinearPoolOps(r);
    RegisterQLinearLookupOps(r);
    RegisterQLinearConcatOps(r);
    RegisterMatMulAddOps(r);
    RegisterMatMulNBitsOps(r);
    RegisterConvOps(r);
    RegisterIntegerConvOps(r);
    RegisterConvTransposeOps(r);
    RegisterConvPoolOps(r);
    RegisterCausalConvOps(r);
    RegisterDeformConvOps(r);
    RegisterPoolOps(r);
    RegisterNormalizationOps(r);
    RegisterDecoderNormOps(r);
    RegisterSoftmaxOps(r);
    RegisterReduceOps(r);
    RegisterShapeOps(r);
    RegisterDropoutOps(r);
    RegisterOptimizerOps(r);
    RegisterMovementOps(r);
    RegisterPadOps(r);
    RegisterConcatOps(r);
    RegisterIndexingOps(r);
    RegisterGeneratorOps(r);
    RegisterResizeOps(r);
    RegisterEinsumOps(r);
    RegisterQuantizeOps(r);
    RegisterDeterminantOps(r);
    RegisterLossOps(r);
    RegisterNonMaxSuppressionOps(r);
    RegisterAttentionOps(r);
    RegisterGroupQueryAttentionOps(r);
    RegisterFlexAttentionOps(r);
    RegisterRotaryOps(r);
    RegisterLinearAttentionOps(r);
    RegisterRecurrentOps(r);
    RegisterControlFlowOps(r);
    RegisterSequenceOps(r);
    RegisterOptionalOps(r);
    RegisterSignalOps(r);
    RegisterImageOps(r);
    RegisterImageDecoderOps(r);
    RegisterRandomOps(r);
    RegisterStringOps(r);
    RegisterTfIdfVectorizerOps(r);
    RegisterMlOps(r);
    return r;
  }();
  return registry;
}

}  // namespace nxrt::cpu
