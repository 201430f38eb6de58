// GroupQueryAttention on the device, float32, float16 or bfloat16 computed in
// float: one kernel appends the new K/V rows to the present caches, then one
// thread block per (query position, head, batch) scores its valid keys into
// shared memory, takes a numerically stable softmax with block reductions and
// sums the V rows. Lengths come from device memory, so both launches are
// capture-safe.
#include <cuda_runtime.h>

#include <cmath>
#include <string>

#include "cuda_check.hpp"
#include "dtype.hpp"
#include "kernels/attention_launch.hpp"
#include "kernels/device_math.cuh"
#include "kernels/rotary_math.cuh"

namespace nxrt::cuda {
namespace {

constexpr unsigned kThreads = 128;
constexpr unsigned kWarps = kThreads / 32;

// Where one batch entry's new rows go, following ONNX Runtime's phases: a
// first prompt sees no past; a later prompt (batch 1) or a decode step (one
// token) follows the valid past rows.
struct Phase {
  int64_t past = 0;
  int64_t valid = 0;
  bool ok = false;
};

__device__ Phase PhaseOf(const GqaArgs& a, int64_t b) {
  Phase phase;
  const int64_t total = *a.total_sequence_length;
  phase.valid = static_cast<int64_t>(a.seqlens_k[b]) + 1;
  const bool later_prompt = a.seq > 1 && a.seq != total;
  const bool first_prompt = !later_prompt && a.seq == total;
  phase.past = first_prompt ? 0 : phase.valid - a.seq;
  const bool has_past = a.past_key != nullptr;
  phase.ok = !(later_prompt && a.batch != 1) && (first_prompt || later_prompt || a.seq == 1) &&
             phase.valid >= 1 && phase.valid <= a.capacity && phase.past >= 0 &&
             phase.past + a.seq <= a.capacity &&
             (phase.past == 0 || (has_past && phase.past <= a.past_capacity));
  return phase;
}

// Element `d` of head vector `x` rotated to `position`; NaN at a position
// outside the caches.
template <typename T>
__device__ float Rotated(const GqaArgs& a, const T* x, int64_t d, int64_t position) {
  if (d >= a.rotary_dim) return ToFloat(x[d]);
  if (position < 0 || position >= a.cache_rows) return NAN;
  const int64_t half = a.rotary_dim / 2;
  const T* cos = static_cast<const T*>(a.cos_cache) + position * half;
  const T* sin = static_cast<const T*>(a.sin_cache) + position * half;
  return RotaryElement(x, cos, sin, d, a.rotary_dim, a.interleaved);
}

// Grid (capacity, batch * kv_heads), one thread per head element.
template <typename T>
__global__ void AppendKvKernel(GqaArgs a) {
  const int64_t row = blockIdx.x;
  const int64_t slab = blockIdx.y;
  const int64_t b = slab / a.kv_heads;
  const int64_t h = slab % a.kv_heads;
  const int64_t d = threadIdx.x;
  const Phase phase = PhaseOf(a, b);
  if (!phase.ok) return;
  T* present_key = static_cast<T*>(a.present_key);
  T* present_value = static_cast<T*>(a.present_value);
  const bool shared = a.past_key == a.present_key && a.past_capacity == a.capacity;
  const int64_t at = (slab * a.capacity + row) * a.depth + d;
  if (row >= phase.past && row < phase.past + a.seq) {
    const int64_t s = row - phase.past;
    const int64_t from = ((b * a.seq + s) * a.kv_heads + h) * a.depth;
    present_key[at] = FromFloat<T>(Rotated(a, static_cast<const T*>(a.key) + from, d, row));
    present_value[at] = static_cast<const T*>(a.value)[from + d];
  } else if (shared) {
    return;
  } else if (row < phase.past) {
    const int64_t from = (slab * a.past_capacity + row) * a.depth + d;
    present_key[at] = static_cast<const T*>(a.past_key)[from];
    present_value[at] = static_cast<const T*>(a.past_value)[from];
  } else {
    // ONNX Runtime leaves the rows after the new ones zeroed.
    present_key[at] = FromFloat<T>(0.0f);
    present_value[at] = FromFloat<T>(0.0f);
  }
}

// Grid (seq, heads, batch); shared memory holds the rotated query, one score
// per key and the reduction scratch.
template <typename T>
__global__ void AttendKernel(GqaArgs a) {
  extern __shared__ float shared[];
  float* q = shared;
  float* scratch = q + a.depth;
  float* scores = scratch + kWarps;
  const int64_t s = blockIdx.x;
  const int64_t head = blockIdx.y;
  const int64_t b = blockIdx.z;
  const int64_t width = a.heads * a.depth;
  T* out = static_cast<T*>(a.output) + (b * a.seq + s) * width + head * a.depth;
  const Phase phase = PhaseOf(a, b);
  if (!phase.ok) {
    for (int64_t d = threadIdx.x; d < a.depth; d += blockDim.x) out[d] = FromFloat<T>(NAN);
    return;
  }
  const T* q_row = static_cast<const T*>(a.query) + (b * a.seq + s) * width + head * a.depth;
  for (int64_t d = threadIdx.x; d < a.depth; d += blockDim.x) {
    q[d] = Rotated(a, q_row, d, phase.past + s);
  }
  __syncthreads();
  const int64_t kv_head = head / (a.heads / a.kv_heads);
  const int64_t slab = (b * a.kv_heads + kv_head) * a.capacity * a.depth;
  const T* keys = static_cast<const T*>(a.present_key) + slab;
  const T* values = static_cast<const T*>(a.present_value) + slab;
  const int64_t count = min(phase.past + s + 1, phase.valid);  // causal
  for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
    const T* k = keys + j * a.depth;
    float dot = 0.0f;
    for (int64_t d = 0; d < a.depth; ++d) dot += q[d] * ToFloat(k[d]);
    scores[j] = dot * a.scale;
  }
  const float inverse = BlockSoftmaxInPlace(scores, count, scratch);
  for (int64_t d = threadIdx.x; d < a.depth; d += blockDim.x) {
    float acc = 0.0f;
    for (int64_t j = 0; j < count; ++j) acc += scores[j] * ToFloat(values[j * a.depth + d]);
    out[d] = FromFloat<T>(acc * inverse);
  }
}

}  // namespace

void LaunchGroupQueryAttention(const GqaArgs& args, cudaStream_t stream) {
  if (args.batch == 0 || args.seq == 0) return;
  if (args.depth > kAttentionMaxDepth || args.capacity > kAttentionMaxKeys) {
    throw sdk::Error(NXRT_STATUS_UNSUPPORTED,
                     "GroupQueryAttention: head size " + std::to_string(args.depth) +
                         " or KV capacity " + std::to_string(args.capacity) +
                         " exceeds the CUDA kernel's " + std::to_string(kAttentionMaxDepth) +
                         " and " + std::to_string(kAttentionMaxKeys) + "; run it on the CPU EP");
  }
  const size_t shared_bytes =
      static_cast<size_t>(args.depth + kWarps + args.capacity) * sizeof(float);
  const bool known = DispatchFloat(args.dtype, [&](auto t_tag) {
    using T = decltype(t_tag);
    AppendKvKernel<T><<<dim3(static_cast<unsigned>(args.capacity),
                             static_cast<unsigned>(args.batch * args.kv_heads)),
                        static_cast<unsigned>(args.depth), 0, stream>>>(args);
    CheckLaunch("GroupQueryAttention KV append kernel launch");
    AttendKernel<T><<<dim3(static_cast<unsigned>(args.seq), static_cast<unsigned>(args.heads),
                           static_cast<unsigned>(args.batch)),
                      kThreads, shared_bytes, stream>>>(args);
    CheckLaunch("GroupQueryAttention attention kernel launch");
  });
  if (!known) {
    throw sdk::Error(NXRT_STATUS_UNSUPPORTED,
                     "no CUDA GroupQueryAttention kernel for " + DtypeName(args.dtype));
  }
}

}  // namespace nxrt::cuda
