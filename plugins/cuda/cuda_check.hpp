// Turns CUDA runtime, cuBLAS and cuDNN results into sdk::Error, so a failing
// call reaches the host as a status naming the call and CUDA's own words.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <string>

#include "nxrt/ep_sdk.hpp"

namespace nxrt::cuda {

inline nxrt_status_code StatusCodeOf(cudaError_t error) {
  switch (error) {
    case cudaErrorMemoryAllocation:
      return NXRT_STATUS_OUT_OF_MEMORY;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
      return NXRT_STATUS_UNAVAILABLE;
    default:
      return NXRT_STATUS_INTERNAL;
  }
}

inline void CheckCuda(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return;
  throw sdk::Error(StatusCodeOf(error), std::string(what) + ": " + cudaGetErrorString(error));
}

// A launch reports its configuration errors through the last-error state.
inline void CheckLaunch(const char* kernel) {
  CheckCuda(cudaGetLastError(), kernel);
}

inline void CheckCublas(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw sdk::Error(
      status == CUBLAS_STATUS_ALLOC_FAILED ? NXRT_STATUS_OUT_OF_MEMORY : NXRT_STATUS_INTERNAL,
      std::string(what) + ": cuBLAS status " + std::to_string(status));
}

// cuDNN 9 groups its status codes by thousands: 3xxx not supported, 4xxx
// internal (4004 a failed device allocation).
inline void CheckCudnn(cudnnStatus_t status, const char* what) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  const int family = static_cast<int>(status) / 1000;
  const nxrt_status_code code = status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED
                                    ? NXRT_STATUS_OUT_OF_MEMORY
                                : family == 3 ? NXRT_STATUS_UNSUPPORTED
                                              : NXRT_STATUS_INTERNAL;
  throw sdk::Error(code, std::string(what) + ": " + cudnnGetErrorString(status));
}

}  // namespace nxrt::cuda
