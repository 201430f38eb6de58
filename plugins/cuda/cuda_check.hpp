// Turns CUDA runtime and cuBLAS results into sdk::Error, so a failing call
// reaches the host as a status naming the call and CUDA's own words.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

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

}  // namespace nxrt::cuda
