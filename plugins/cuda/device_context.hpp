// What every CUDA kernel of one EP instance shares: the device, the one
// stream all work is ordered on, the cuBLASLt handle with its workspace, and
// the cuDNN handle (bound to that stream).
// Kernels never outlive their EP, so they hold a plain reference.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstddef>

namespace nxrt::cuda {

struct DeviceContext {
  int device = 0;
  cudaStream_t stream = nullptr;
  cublasLtHandle_t blas_lt = nullptr;
  // One workspace suffices: every matmul runs on the same stream.
  void* blas_workspace = nullptr;
  size_t blas_workspace_bytes = 0;
  cudnnHandle_t dnn = nullptr;
};

}  // namespace nxrt::cuda
