// The default-domain Attention on the device. Keys and values are read where
// they lie (past rows from the past caches, new rows from K and V in their
// own layout), so the attention kernel does not wait on the present caches;
// one thread block per (query position, query head, batch) scores every key
// into shared memory and takes the softmax with the shared block reductions.
// float32 computes in float; a 16-bit type follows the specification's
// arithmetic in that type, as the CPU EP does: Q and K each scaled by
// sqrt(scale), the scores, mask sums and probabilities rounded to the type,
// and the softmax's steps too unless softmax_precision asks for float.
#include <cuda_runtime.h>

#include <cmath>
#include <string>
#include <type_traits>

#include "cuda_check.hpp"
#include "dtype.hpp"
#include "kernels/attention_limits.hpp"
#include "kernels/device_math.cuh"
#include "kernels/sdpa_launch.hpp"

namespace nxrt::cuda {
namespace {

constexpr unsigned kThreads = 128;
constexpr unsigned kWarps = kThreads / 32;

// Element offset of (b, head, s, 0) in Q, K, V or the output.
__device__ __forceinline__ int64_t At(const AttentionArgs& a, int64_t b, int64_t head, int64_t s,
                                      int64_t heads, int64_t len, int64_t width) {
  return a.heads_first ? ((b * heads + head) * len + s) * width
                       : (b * len + s) * heads * width + head * width;
}

// Row `t` of KV head `h` of batch `b`: from the past below `past`, else from
// the new rows.
template <typename T>
__device__ __forceinline__ const T* KvRow(const AttentionArgs& a, const void* past,
                                          const void* fresh, int64_t width, int64_t b, int64_t h,
                                          int64_t t) {
  if (t < a.past) {
    return static_cast<const T*>(past) + ((b * a.kv_heads + h) * a.past + t) * width;
  }
  return static_cast<const T*>(fresh) + At(a, b, h, t - a.past, a.kv_heads, a.kv_len, width);
}

__device__ float MaskValue(const AttentionArgs& a, int64_t index) {
  switch (a.mask_dtype) {
    case NXRT_DTYPE_BOOL:
      return static_cast<const bool*>(a.mask)[index] ? 0.0f : -INFINITY;
    case NXRT_DTYPE_FLOAT16:
      return ToFloat(static_cast<const __half*>(a.mask)[index]);
    case NXRT_DTYPE_BFLOAT16:
      return ToFloat(static_cast<const __nv_bfloat16*>(a.mask)[index]);
    default:
      return static_cast<const float*>(a.mask)[index];
  }
}

// One present cache, [batch, kv_heads, past + kv_len, width].
template <typename T>
__global__ void PresentKernel(AttentionArgs a, const void* past, const void* fresh, void* present,
                              int64_t width, int64_t count) {
  const int64_t total = a.past + a.kv_len;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t d = e % width;
    const int64_t t = e / width % total;
    const int64_t slab = e / width / total;
    static_cast<T*>(present)[e] =
        KvRow<T>(a, past, fresh, width, slab / a.kv_heads, slab % a.kv_heads, t)[d];
  }
}

// `x` rounded to T and back: the specification's arithmetic in a 16-bit
// type rounds every step's result.
template <typename T>
__device__ __forceinline__ float Round(float x) {
  return ToFloat(FromFloat<T>(x));
}

// The softmax of `scores` in place, each step rounded to T; returns the
// reciprocal of the sum, 0 when every key is masked. A bfloat16 sum rounds
// at each addition, in key order, and a float16 sum accumulates in float,
// as the specification's reference arithmetic does.
template <typename T>
__device__ float BlockSoftmaxInType(float* scores, int64_t count, float* scratch) {
  float largest = -INFINITY;
  for (int64_t j = threadIdx.x; j < count; j += blockDim.x) largest = fmaxf(largest, scores[j]);
  largest = BlockReduce<Combine::kMax>(largest, scratch);
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
    scores[j] = largest == -INFINITY ? 0.0f : Round<T>(expf(Round<T>(scores[j] - largest)));
    sum += scores[j];
  }
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    __syncthreads();
    if (threadIdx.x == 0) {
      float ordered = 0.0f;
      for (int64_t j = 0; j < count; ++j) ordered = Round<T>(ordered + scores[j]);
      scratch[0] = ordered;
    }
    __syncthreads();
    sum = scratch[0];
    __syncthreads();
  } else {
    sum = BlockReduce<Combine::kSum>(sum, scratch);
  }
  sum = Round<T>(sum);
  for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
    scores[j] = sum > 0.0f ? Round<T>(scores[j] / sum) : 0.0f;
  }
  __syncthreads();
  return sum > 0.0f ? 1.0f : 0.0f;
}

// Grid (q_len, q_heads, batch); shared memory holds the query row, the
// reduction scratch and one score per key.
template <typename T>
__global__ void AttendKernel(AttentionArgs a) {
  constexpr bool kNarrow = !std::is_same_v<T, float>;
  extern __shared__ float shared[];
  float* q = shared;
  float* scratch = q + a.head;
  float* scores = scratch + kWarps;
  const int64_t i = blockIdx.x;
  const int64_t h = blockIdx.y;
  const int64_t b = blockIdx.z;
  const int64_t kv_head = h / (a.q_heads / a.kv_heads);
  const int64_t total = a.past + a.kv_len;
  const float root_scale = Round<T>(sqrtf(a.scale));
  const T* q_row = static_cast<const T*>(a.query) + At(a, b, h, i, a.q_heads, a.q_len, a.head);
  for (int64_t d = threadIdx.x; d < a.head; d += blockDim.x) {
    q[d] = kNarrow ? Round<T>(ToFloat(q_row[d]) * root_scale) : ToFloat(q_row[d]);
  }
  __syncthreads();
  const int64_t mask_row = b * a.mask_strides[0] + h * a.mask_strides[1] + i * a.mask_strides[2];
  for (int64_t j = threadIdx.x; j < total; j += blockDim.x) {
    float bias = 0.0f;
    if (a.mask != nullptr) {
      bias = j < a.mask_keys ? MaskValue(a, mask_row + j * a.mask_strides[3]) : -INFINITY;
    }
    if (a.causal && j > i + a.past) bias = -INFINITY;
    if (bias == -INFINITY) {
      scores[j] = -INFINITY;
      continue;
    }
    const T* k = KvRow<T>(a, a.past_key, a.key, a.head, b, kv_head, j);
    float dot = 0.0f;
    for (int64_t d = 0; d < a.head; ++d) {
      dot += q[d] * (kNarrow ? Round<T>(ToFloat(k[d]) * root_scale) : ToFloat(k[d]));
    }
    float score = kNarrow ? Round<T>(dot) : dot * a.scale;
    if (a.softcap > 0.0f) {
      score = kNarrow ? Round<T>(Round<T>(tanhf(Round<T>(score / a.softcap))) * a.softcap)
                      : a.softcap * tanhf(score / a.softcap);
    }
    scores[j] = kNarrow ? Round<T>(score + Round<T>(bias)) : score + bias;
  }
  float inverse = 0.0f;
  if (kNarrow && a.narrow_softmax) {
    inverse = BlockSoftmaxInType<T>(scores, total, scratch);
  } else {
    inverse = BlockSoftmaxInPlace(scores, total, scratch);
    if (kNarrow) {
      for (int64_t j = threadIdx.x; j < total; j += blockDim.x) {
        scores[j] = Round<T>(scores[j] * inverse);
      }
      inverse = inverse > 0.0f ? 1.0f : 0.0f;
      __syncthreads();
    }
  }
  T* out = static_cast<T*>(a.output) + At(a, b, h, i, a.q_heads, a.q_len, a.v_head);
  for (int64_t d = threadIdx.x; d < a.v_head; d += blockDim.x) {
    float acc = 0.0f;
    for (int64_t j = 0; j < total; ++j) {
      if (scores[j] != 0.0f) {
        acc += scores[j] * ToFloat(KvRow<T>(a, a.past_value, a.value, a.v_head, b, kv_head, j)[d]);
      }
    }
    out[d] = FromFloat<T>(acc * inverse);
  }
}

template <typename T>
void LaunchPresent(const AttentionArgs& a, const void* past, const void* fresh, void* present,
                   int64_t width, cudaStream_t stream) {
  const int64_t count = a.batch * a.kv_heads * (a.past + a.kv_len) * width;
  if (present == nullptr || count == 0) return;
  PresentKernel<T>
      <<<BlocksFor(count, 256), 256, 0, stream>>>(a, past, fresh, present, width, count);
  CheckLaunch("Attention present cache kernel launch");
}

}  // namespace

void LaunchAttention(const AttentionArgs& args, cudaStream_t stream) {
  const int64_t total = args.past + args.kv_len;
  if (args.head > kAttentionMaxDepth || total > kAttentionMaxKeys) {
    throw sdk::Error(NXRT_STATUS_UNSUPPORTED,
                     "Attention: head size " + std::to_string(args.head) + " or " +
                         std::to_string(total) + " keys exceed the CUDA kernel's " +
                         std::to_string(kAttentionMaxDepth) + " and " +
                         std::to_string(kAttentionMaxKeys) + "; run it on the CPU EP");
  }
  const bool known = DispatchFloat(args.dtype, [&](auto t_tag) {
    using T = decltype(t_tag);
    LaunchPresent<T>(args, args.past_key, args.key, args.present_key, args.head, stream);
    LaunchPresent<T>(args, args.past_value, args.value, args.present_value, args.v_head, stream);
    if (args.batch == 0 || args.q_heads == 0 || args.q_len == 0 || args.v_head == 0) return;
    const size_t shared_bytes = static_cast<size_t>(args.head + kWarps + total) * sizeof(float);
    AttendKernel<T><<<dim3(static_cast<unsigned>(args.q_len), static_cast<unsigned>(args.q_heads),
                           static_cast<unsigned>(args.batch)),
                      kThreads, shared_bytes, stream>>>(args);
    CheckLaunch("Attention kernel launch");
  });
  if (!known) {
    throw sdk::Error(NXRT_STATUS_UNSUPPORTED,
                     "no CUDA Attention kernel for " + DtypeName(args.dtype));
  }
}

}  // namespace nxrt::cuda
