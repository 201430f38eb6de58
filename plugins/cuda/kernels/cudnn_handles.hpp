// Owners of the cuDNN legacy-API descriptors and of a kernel's own device
// scratch memory. The kernels that run through cuDNN (Conv, pooling) make and
// fill all of these when the kernel is made, so compute only reads them: no
// allocation and no host sync, which keeps compute capture-safe.
#pragma once

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>

#include "cuda_check.hpp"
#include "dtype.hpp"

namespace nxrt::cuda {

template <typename Handle, cudnnStatus_t (*Create)(Handle*), cudnnStatus_t (*Destroy)(Handle)>
class CudnnDescriptor {
 public:
  CudnnDescriptor() { CheckCudnn(Create(&handle_), "cudnnCreate*Descriptor"); }
  ~CudnnDescriptor() { Destroy(handle_); }
  CudnnDescriptor(const CudnnDescriptor&) = delete;
  CudnnDescriptor& operator=(const CudnnDescriptor&) = delete;

  Handle get() const { return handle_; }

 private:
  Handle handle_ = nullptr;
};

using TensorDescriptor = CudnnDescriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor,
                                         cudnnDestroyTensorDescriptor>;
using FilterDescriptor = CudnnDescriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor,
                                         cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor =
    CudnnDescriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                    cudnnDestroyConvolutionDescriptor>;
using PoolingDescriptor = CudnnDescriptor<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor,
                                          cudnnDestroyPoolingDescriptor>;

// Device memory a kernel owns for its lifetime (a cuDNN workspace, a padded
// copy of an input). Freeing waits for the device, so no queued work still
// uses it.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) {
    if (bytes > 0) CheckCuda(cudaMalloc(&data_, bytes), "cudaMalloc(kernel scratch)");
  }
  ~DeviceBuffer() {
    if (data_) cudaFree(data_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return data_; }

 private:
  void* data_ = nullptr;
};

// The cuDNN element type of the dtypes the cuDNN kernels compute.
inline cudnnDataType_t CudnnType(nxrt_dtype dtype) {
  switch (dtype) {
    case NXRT_DTYPE_FLOAT32:
      return CUDNN_DATA_FLOAT;
    case NXRT_DTYPE_FLOAT16:
      return CUDNN_DATA_HALF;
    default:
      throw sdk::Error(NXRT_STATUS_UNSUPPORTED,
                       "no cuDNN kernel here computes " + DtypeName(dtype));
  }
}

// cuDNN's legacy API counts in int.
inline int CudnnInt(int64_t value, const char* what) {
  if (value < 0 || value > INT_MAX) {
    throw sdk::Error(NXRT_STATUS_UNSUPPORTED, std::string(what) + " " + std::to_string(value) +
                                                  " exceeds cuDNN's int range");
  }
  return static_cast<int>(value);
}

// A packed NCHW tensor of `type`; cuDNN indexes its elements in int too.
inline void SetTensor4d(const TensorDescriptor& descriptor, cudnnDataType_t type, int64_t n,
                        int64_t c, int64_t h, int64_t w) {
  CudnnInt(n * c * h * w, "element count");
  CheckCudnn(cudnnSetTensor4dDescriptor(descriptor.get(), CUDNN_TENSOR_NCHW, type,
                                        CudnnInt(n, "batch"), CudnnInt(c, "channels"),
                                        CudnnInt(h, "height"), CudnnInt(w, "width")),
             "cudnnSetTensor4dDescriptor");
}

}  // namespace nxrt::cuda
