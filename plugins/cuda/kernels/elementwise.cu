// Elementwise device kernels: unary and broadcasting binary arithmetic (float
// types; Add, Sub and Mul also over int32 and int64), Cast,
// the strided gather behind Transpose/Slice/broadcast copies, and Gather.
#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "cuda_check.hpp"
#include "dtype.hpp"
#include "kernels/device_math.cuh"
#include "kernels/launchers.hpp"

namespace nxrt::cuda {
namespace {

constexpr unsigned kThreads = 256;

__device__ __forceinline__ float ApplyUnary(UnaryOp op, float x) {
  switch (op) {
    case UnaryOp::kRelu:
      return x > 0.0f ? x : 0.0f;
    case UnaryOp::kSigmoid:
      return 1.0f / (1.0f + expf(-x));
    case UnaryOp::kTanh:
      return tanhf(x);
    case UnaryOp::kNeg:
      return -x;
    case UnaryOp::kExp:
      return expf(x);
    case UnaryOp::kSqrt:
      return sqrtf(x);
    case UnaryOp::kErf:
      return erff(x);
    case UnaryOp::kGelu:
      return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case UnaryOp::kGeluTanh:
      return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
  }
  return x;
}

__device__ __forceinline__ float ApplyBinary(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::kAdd:
      return a + b;
    case BinaryOp::kSub:
      return a - b;
    case BinaryOp::kMul:
      return a * b;
    case BinaryOp::kDiv:
      return a / b;
    case BinaryOp::kPow:
      return powf(a, b);
  }
  return a;
}

// Integer Add, Sub and Mul, exact in the operands' type; unsigned arithmetic
// wraps on overflow where signed would be undefined. The launcher refuses
// the other ops for integers.
template <typename T>
__device__ __forceinline__ T ApplyIntegerBinary(BinaryOp op, T a, T b) {
  using Unsigned = std::make_unsigned_t<T>;
  const Unsigned x = static_cast<Unsigned>(a);
  const Unsigned y = static_cast<Unsigned>(b);
  switch (op) {
    case BinaryOp::kAdd:
      return static_cast<T>(x + y);
    case BinaryOp::kSub:
      return static_cast<T>(x - y);
    case BinaryOp::kMul:
      return static_cast<T>(x * y);
    default:
      return T{};
  }
}

template <typename T>
__global__ void UnaryKernel(UnaryOp op, const T* in, T* out, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    out[i] = FromFloat<T>(ApplyUnary(op, ToFloat(in[i])));
  }
}

template <typename T>
__global__ void BinaryKernel(BinaryOp op, const T* a, const T* b, T* out, BinaryGeometry g,
                             int64_t count) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t ia = i, ib = i;
    if (!g.same_shape) {
      ia = 0;
      ib = 0;
      int64_t rest = i;
      for (int d = g.rank - 1; d >= 0; --d) {
        const int64_t coordinate = rest % g.dims[d];
        rest /= g.dims[d];
        ia += coordinate * g.a_strides[d];
        ib += coordinate * g.b_strides[d];
      }
    }
    if constexpr (std::is_integral_v<T>) {
      out[i] = ApplyIntegerBinary(op, a[ia], b[ib]);
    } else {
      out[i] = FromFloat<T>(ApplyBinary(op, ToFloat(a[ia]), ToFloat(b[ib])));
    }
  }
}

template <typename From, typename To>
__global__ void CastKernel(const From* in, To* out, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    out[i] = Convert<To>(in[i]);
  }
}

template <typename Word>
__global__ void StridedCopyKernel(const Word* in, Word* out, CopyGeometry g, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t source = g.offset;
    int64_t rest = i;
    for (int d = g.rank - 1; d >= 0; --d) {
      source += (rest % g.dims[d]) * g.strides[d];
      rest /= g.dims[d];
    }
    out[i] = in[source];
  }
}

template <typename Word, typename Index>
__global__ void GatherKernel(const Word* data, const Index* indices, Word* out, int64_t outer,
                             int64_t axis_extent, int64_t index_count, int64_t inner) {
  const int64_t count = outer * index_count * inner;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t n = i % inner;
    const int64_t k = (i / inner) % index_count;
    const int64_t o = i / (inner * index_count);
    int64_t index = static_cast<int64_t>(indices[k]);
    if (index < 0) index += axis_extent;
    out[i] =
        index >= 0 && index < axis_extent ? data[(o * axis_extent + index) * inner + n] : Word{};
  }
}

// Calls body(Word{}) with an unsigned word of `size` bytes.
template <typename Body>
void DispatchWord(size_t size, Body&& body) {
  switch (size) {
    case 1:
      body(uint8_t{});
      return;
    case 2:
      body(uint16_t{});
      return;
    case 4:
      body(uint32_t{});
      return;
    case 8:
      body(uint64_t{});
      return;
    default:
      throw sdk::Error(NXRT_STATUS_UNSUPPORTED,
                       "no CUDA copy for elements of " + std::to_string(size) + " bytes");
  }
}

template <typename Body>
void DispatchCastable(nxrt_dtype dtype, Body&& body) {
  if (DispatchFloat(dtype, body)) return;
  if (dtype == NXRT_DTYPE_INT32) return body(int32_t{});
  if (dtype == NXRT_DTYPE_INT64) return body(int64_t{});
  throw sdk::Error(NXRT_STATUS_UNSUPPORTED, "no CUDA cast for " + DtypeName(dtype));
}

[[noreturn]] void RefuseDtype(nxrt_dtype dtype) {
  throw sdk::Error(NXRT_STATUS_UNSUPPORTED, "no CUDA arithmetic for " + DtypeName(dtype));
}

}  // namespace

void LaunchUnary(UnaryOp op, nxrt_dtype dtype, const void* in, void* out, int64_t count,
                 cudaStream_t stream) {
  if (count == 0) return;
  const bool known = DispatchFloat(dtype, [&](auto t_tag) {
    using T = decltype(t_tag);
    UnaryKernel<T><<<BlocksFor(count, kThreads), kThreads, 0, stream>>>(
        op, static_cast<const T*>(in), static_cast<T*>(out), count);
  });
  if (!known) RefuseDtype(dtype);
  CheckLaunch("unary kernel launch");
}

void LaunchBinary(BinaryOp op, nxrt_dtype dtype, const void* a, const void* b, void* out,
                  const BinaryGeometry& geometry, int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  const auto launch = [&](auto t_tag) {
    using T = decltype(t_tag);
    BinaryKernel<T><<<BlocksFor(count, kThreads), kThreads, 0, stream>>>(
        op, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(out), geometry,
        count);
  };
  const bool integer_op = op == BinaryOp::kAdd || op == BinaryOp::kSub || op == BinaryOp::kMul;
  if (dtype == NXRT_DTYPE_INT32 && integer_op) {
    launch(int32_t{});
  } else if (dtype == NXRT_DTYPE_INT64 && integer_op) {
    launch(int64_t{});
  } else if (!DispatchFloat(dtype, launch)) {
    RefuseDtype(dtype);
  }
  CheckLaunch("binary kernel launch");
}

void LaunchCast(nxrt_dtype from, nxrt_dtype to, const void* in, void* out, int64_t count,
                cudaStream_t stream) {
  if (count == 0) return;
  DispatchCastable(from, [&](auto from_tag) {
    using From = decltype(from_tag);
    DispatchCastable(to, [&](auto to_tag) {
      using To = decltype(to_tag);
      CastKernel<From, To><<<BlocksFor(count, kThreads), kThreads, 0, stream>>>(
          static_cast<const From*>(in), static_cast<To*>(out), count);
    });
  });
  CheckLaunch("cast kernel launch");
}

void LaunchStridedCopy(size_t element_size, const void* in, void* out, const CopyGeometry& geometry,
                       int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  DispatchWord(element_size, [&](auto word_tag) {
    using Word = decltype(word_tag);
    StridedCopyKernel<Word><<<BlocksFor(count, kThreads), kThreads, 0, stream>>>(
        static_cast<const Word*>(in), static_cast<Word*>(out), geometry, count);
  });
  CheckLaunch("strided copy kernel launch");
}

void LaunchGather(size_t element_size, const void* data, const void* indices, bool indices_int64,
                  void* out, int64_t outer, int64_t axis_extent, int64_t index_count, int64_t inner,
                  cudaStream_t stream) {
  const int64_t count = outer * index_count * inner;
  if (count == 0) return;
  DispatchWord(element_size, [&](auto word_tag) {
    using Word = decltype(word_tag);
    const unsigned blocks = BlocksFor(count, kThreads);
    if (indices_int64) {
      GatherKernel<Word, int64_t><<<blocks, kThreads, 0, stream>>>(
          static_cast<const Word*>(data), static_cast<const int64_t*>(indices),
          static_cast<Word*>(out), outer, axis_extent, index_count, inner);
    } else {
      GatherKernel<Word, int32_t><<<blocks, kThreads, 0, stream>>>(
          static_cast<const Word*>(data), static_cast<const int32_t*>(indices),
          static_cast<Word*>(out), outer, axis_extent, index_count, inner);
    }
  });
  CheckLaunch("gather kernel launch");
}

}  // namespace nxrt::cuda
