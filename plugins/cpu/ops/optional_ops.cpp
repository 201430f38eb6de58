// Optional values: Optional wraps a tensor or sequence (or nothing),
// OptionalHasElement tells whether one is there, OptionalGetElement unwraps
// it. The value crosses the ABI as itself, or as kind NONE when absent.
// Outputs of unknown kind are allocated here, so none is capture-safe.
#include <string>

#include "cpu_kernel.hpp"
#include "owned_value.hpp"

namespace nxrt::cpu {
namespace {

class OptionalKernel : public CpuKernel {
 public:
  explicit OptionalKernel(std::string op) : CpuKernel(false), op_(std::move(op)) {}
  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const bool present = !inputs.empty() && inputs[0].kind != NXRT_VALUE_NONE;
    if (op_ == "OptionalHasElement") {
      nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_BOOL, {});
      *MutableDataAs<bool>(out) = present;
      return;
    }
    if (!present) {
      if (op_ == "OptionalGetElement") FailInvalid("OptionalGetElement: the optional is empty");
      ctx.SetOutputNone(0);
      outputs[0].kind = NXRT_VALUE_NONE;
      return;
    }
    WriteValue(ctx, outputs, 0, inputs[0]);
  }

 private:
  std::string op_;
};

sdk::ClaimResult ClaimAnyValue(const sdk::Node& node, int64_t,
                               std::span<const nxrt_value_info> inputs) {
  for (const nxrt_value_info& in : inputs) {
    if (in.kind == NXRT_VALUE_SEQUENCE && in.dtype == NXRT_DTYPE_STRING) {
      return sdk::ClaimResult::Declined(std::string(node.op_type()) +
                                        ": sequences of strings not supported");
    }
  }
  return sdk::ClaimResult::Claimed();
}

std::unique_ptr<CpuKernel> MakeOptional(const sdk::Node& node, std::span<const nxrt_shape>,
                                        int64_t) {
  return std::make_unique<OptionalKernel>(std::string(node.op_type()));
}

}  // namespace

void RegisterOptionalOps(OpRegistry& r) {
  for (const char* op : {"Optional", "OptionalHasElement", "OptionalGetElement"}) {
    r.Add(op, OpDefinition(15, ClaimAnyValue, MakeOptional));
  }
}

}  // namespace nxrt::cpu
