// The CPU EP kernel of a PlainPrimitive: float input 0 to float output 0 of
// the dims it was planned for.
#pragma once

#include <utility>

#include "cpu_kernel.hpp"
#include "onednn/plain_primitive.hpp"

namespace nxrt::cpu {

class PlainPrimitiveKernel : public CpuKernel {
 public:
  PlainPrimitiveKernel(onednn::PlainPrimitive primitive, Dims out_dims)
      : CpuKernel(true), primitive_(std::move(primitive)), out_dims_(std::move(out_dims)) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_FLOAT32, out_dims_);
    primitive_.Run(DataAs<float>(inputs[0].tensor), MutableDataAs<float>(out));
  }

 private:
  onednn::PlainPrimitive primitive_;
  Dims out_dims_;
};

}  // namespace nxrt::cpu
