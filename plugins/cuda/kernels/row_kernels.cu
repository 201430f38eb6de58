// Row kernels over the last axis: Softmax, layer and RMS normalisation, and
// last-axis sum/mean. One block per row; float accumulation throughout.
#include <cuda_runtime.h>

#include <string>

#include "cuda_check.hpp"
#include "dtype.hpp"
#include "kernels/device_math.cuh"
#include "kernels/launchers.hpp"

namespace nxrt::cuda {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kWarps = kThreads / 32;

template <typename T>
__global__ void SoftmaxKernel(const T* in, T* out, int64_t cols) {
  __shared__ float scratch[kWarps];
  const T* row = in + blockIdx.x * cols;
  T* result = out + blockIdx.x * cols;
  float largest = -INFINITY;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    largest = fmaxf(largest, ToFloat(row[c]));
  largest = BlockReduce<Combine::kMax>(largest, scratch);
  float total = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) total += expf(ToFloat(row[c]) - largest);
  total = BlockReduce<Combine::kSum>(total, scratch);
  const float inverse = 1.0f / total;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    result[c] = FromFloat<T>(expf(ToFloat(row[c]) - largest) * inverse);
  }
}

template <typename T>
__global__ void NormalizationKernel(const T* in, const T* scale, const T* bias, T* out,
                                    int64_t cols, float epsilon, bool rms) {
  __shared__ float scratch[kWarps];
  const T* row = in + blockIdx.x * cols;
  T* result = out + blockIdx.x * cols;
  float mean = 0.0f;
  if (!rms) {
    float total = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) total += ToFloat(row[c]);
    mean = BlockReduce<Combine::kSum>(total, scratch) / static_cast<float>(cols);
  }
  float squares = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float centred = ToFloat(row[c]) - mean;
    squares += centred * centred;
  }
  const float variance = BlockReduce<Combine::kSum>(squares, scratch) / static_cast<float>(cols);
  const float inverse = rsqrtf(variance + epsilon);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    float value = (ToFloat(row[c]) - mean) * inverse * ToFloat(scale[c]);
    if (bias != nullptr) value += ToFloat(bias[c]);
    result[c] = FromFloat<T>(value);
  }
}

template <typename T>
__global__ void ReduceKernel(const T* in, T* out, int64_t cols, bool mean) {
  __shared__ float scratch[kWarps];
  const T* row = in + blockIdx.x * cols;
  float total = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) total += ToFloat(row[c]);
  total = BlockReduce<Combine::kSum>(total, scratch);
  if (threadIdx.x == 0) {
    out[blockIdx.x] = FromFloat<T>(mean ? total / static_cast<float>(cols) : total);
  }
}

void CheckRows(int64_t rows) {
  if (rows > 0x7fffffff) {
    throw sdk::Error(NXRT_STATUS_UNSUPPORTED,
                     std::to_string(rows) + " rows exceed one CUDA grid dimension");
  }
}

[[noreturn]] void RefuseDtype(nxrt_dtype dtype) {
  throw sdk::Error(NXRT_STATUS_UNSUPPORTED, "no CUDA row kernel for " + DtypeName(dtype));
}

}  // namespace

void LaunchSoftmax(nxrt_dtype dtype, const void* in, void* out, int64_t rows, int64_t cols,
                   cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  CheckRows(rows);
  const bool known = DispatchFloat(dtype, [&](auto t_tag) {
    using T = decltype(t_tag);
    SoftmaxKernel<T><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
        static_cast<const T*>(in), static_cast<T*>(out), cols);
  });
  if (!known) RefuseDtype(dtype);
  CheckLaunch("softmax kernel launch");
}

void LaunchNormalization(nxrt_dtype dtype, const void* in, const void* scale, const void* bias,
                         void* out, int64_t rows, int64_t cols, float epsilon, bool rms,
                         cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  CheckRows(rows);
  const bool known = DispatchFloat(dtype, [&](auto t_tag) {
    using T = decltype(t_tag);
    NormalizationKernel<T><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
        static_cast<const T*>(in), static_cast<const T*>(scale), static_cast<const T*>(bias),
        static_cast<T*>(out), cols, epsilon, rms);
  });
  if (!known) RefuseDtype(dtype);
  CheckLaunch("normalization kernel launch");
}

void LaunchReduceLastAxis(nxrt_dtype dtype, const void* in, void* out, int64_t rows, int64_t cols,
                          bool mean, cudaStream_t stream) {
  if (rows == 0) return;
  CheckRows(rows);
  const bool known = DispatchFloat(dtype, [&](auto t_tag) {
    using T = decltype(t_tag);
    ReduceKernel<T><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
        static_cast<const T*>(in), static_cast<T*>(out), cols, mean);
  });
  if (!known) RefuseDtype(dtype);
  CheckLaunch("reduce kernel launch");
}

}  // namespace nxrt::cuda
