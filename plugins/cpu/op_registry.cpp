#include "op_registry.hpp"

namespace nxrt::cpu {

void OpRegistry::Add(std::string op_type, OpDefinition definition) {
  ops_.insert_or_assign(std::move(op_type), std::move(definition));
}

const OpDefinition* OpRegistry::Find(std::string_view op_type) const {
  auto it = ops_.find(op_type);
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
    RegisterConvOps(r);
    RegisterPoolOps(r);
    RegisterNormalizationOps(r);
    RegisterSoftmaxOps(r);
    RegisterReduceOps(r);
    RegisterShapeOps(r);
    RegisterMovementOps(r);
    RegisterIndexingOps(r);
    RegisterGeneratorOps(r);
    RegisterResizeOps(r);
    RegisterEinsumOps(r);
    RegisterQuantizeOps(r);
    RegisterDeterminantOps(r);
    RegisterLossOps(r);
    RegisterNonMaxSuppressionOps(r);
    return r;
  }();
  return registry;
}

}  // namespace nxrt::cpu
