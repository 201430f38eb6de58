// The base of every CUDA EP kernel: the EP's device context, and the output
// buffer of a compute call, asked of the host only when it did not
// preallocate one (a preallocated output keeps compute capture-safe).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "device_context.hpp"
#include "nxrt/ep_sdk.hpp"

namespace nxrt::cuda {

class CudaKernel : public sdk::Kernel {
 public:
  explicit CudaKernel(const DeviceContext& context) : context_(context) {}

 protected:
  const DeviceContext& context() const { return context_; }
  cudaStream_t stream() const { return context_.stream; }

  // Output `index` at `dims`; the host's preallocated buffer when it has one.
  static nxrt_tensor& Output(sdk::ComputeContext& ctx, std::span<nxrt_value> outputs, size_t index,
                             nxrt_dtype dtype, std::span<const int64_t> dims) {
    nxrt_value& out = outputs[index];
    if (out.tensor.data == nullptr) {
      out.kind = NXRT_VALUE_TENSOR;
      out.tensor = ctx.AllocateOutput(index, dtype, dims);
    }
    return out.tensor;
  }

  static std::vector<int64_t> DimsOf(const nxrt_shape& shape) {
    return shape.rank == 0 ? std::vector<int64_t>{}
                           : std::vector<int64_t>(shape.dims, shape.dims + shape.rank);
  }
  static std::vector<int64_t> DimsOf(const nxrt_tensor& tensor) {
    return tensor.rank == 0 ? std::vector<int64_t>{}
                            : std::vector<int64_t>(tensor.dims, tensor.dims + tensor.rank);
  }

 private:
  const DeviceContext& context_;
};

}  // namespace nxrt::cuda
