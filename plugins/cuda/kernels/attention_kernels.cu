// GroupQueryAttention on the device, float32: one kernel appends the new K/V
// rows to the present caches, then one thread block per (query position,
// head, batch) scores its valid keys into shared memory, takes a numerically
// stable softmax with block reductions and sums the V rows. Lengths come from
// device memory, so both launches are capture-safe.
#include <cuda_runtime.h>

#include <cmath>
#include <string>

#include "cuda_check.hpp"
#include "kernels/attention_launch.hpp"

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

// Element `d` of head vector `x` rotated to `position`: element i pairs with
// i + rotary_dim / 2 (half split) or 2i with 2i + 1 (interleaved).
__device__ float Rotated(const GqaArgs& a, const float* x, int64_t d, int64_t position) {
  if (d >= a.rotary_dim) return x[d];
  if (position < 0 || position >= a.cache_rows) return NAN;
  const int64_t half = a.rotary_dim / 2;
  int64_t i = 0;
  float partner = 0.0f;
  if (a.interleaved) {
    i = d / 2;
    partner = d % 2 == 0 ? -x[d + 1] : x[d - 1];
  } else {
    i = d < half ? d : d - half;
    partner = d < half ? -x[d + half] : x[d - half];
  }
  const float c = a.cos_cache[position * half + i];
  const float s = a.sin_cache[position * half + i];
  return x[d] * c + partner * s;
}

// Grid (capacity, batch * kv_heads), one thread per head element.
__global__ void AppendKvKernel(GqaArgs a) {
  const int64_t row = blockIdx.x;
  const int64_t slab = blockIdx.y;
  const int64_t b = slab / a.kv_heads;
  const int64_t h = slab % a.kv_heads;
  const int64_t d = threadIdx.x;
  const Phase phase = PhaseOf(a, b);
  if (!phase.ok) return;
  const bool shared = a.past_key == a.present_key && a.past_capacity == a.capacity;
  const int64_t at = (slab * a.capacity + row) * a.depth + d;
  if (row >= phase.past && row < phase.past + a.seq) {
    const int64_t s = row - phase.past;
    const int64_t from = ((b * a.seq + s) * a.kv_heads + h) * a.depth;
    a.present_key[at] = Rotated(a, a.key + from, d, row);
    a.present_value[at] = a.value[from + d];
  } else if (shared) {
    return;
  } else if (row < phase.past) {
    const int64_t from = (slab * a.past_capacity + row) * a.depth + d;
    a.present_key[at] = a.past_key[from];
    a.present_value[at] = a.past_value[from];
  } else {
    // ONNX Runtime leaves the rows after the new ones zeroed.
    a.present_key[at] = 0.0f;
    a.present_value[at] = 0.0f;
  }
}

enum class Combine { kSum, kMax };

// Every thread of the block receives the combined value.
template <Combine kind>
__device__ float BlockReduce(float value, float* scratch) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, value, offset);
    value = kind == Combine::kSum ? value + other : fmaxf(value, other);
  }
  const unsigned warp = threadIdx.x / 32;
  const unsigned lane = threadIdx.x % 32;
  __syncthreads();  // scratch may still be read by a previous reduction
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  value = lane < kWarps ? scratch[lane] : (kind == Combine::kSum ? 0.0f : -INFINITY);
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, value, offset);
    value = kind == Combine::kSum ? value + other : fmaxf(value, other);
  }
  return value;
}

// Grid (seq, heads, batch); shared memory holds the rotated query, one score
// per key and the reduction scratch.
__global__ void AttendKernel(GqaArgs a) {
  extern __shared__ float shared[];
  float* q = shared;
  float* scratch = q + a.depth;
  float* scores = scratch + kWarps;
  const int64_t s = blockIdx.x;
  const int64_t head = blockIdx.y;
  const int64_t b = blockIdx.z;
  const int64_t width = a.heads * a.depth;
  float* out = a.output + (b * a.seq + s) * width + head * a.depth;
  const Phase phase = PhaseOf(a, b);
  if (!phase.ok) {
    for (int64_t d = threadIdx.x; d < a.depth; d += blockDim.x) out[d] = NAN;
    return;
  }
  const float* q_row = a.query + (b * a.seq + s) * width + head * a.depth;
  for (int64_t d = threadIdx.x; d < a.depth; d += blockDim.x) {
    q[d] = Rotated(a, q_row, d, phase.past + s);
  }
  __syncthreads();
  const int64_t kv_head = head / (a.heads / a.kv_heads);
  const int64_t slab = (b * a.kv_heads + kv_head) * a.capacity * a.depth;
  const float* keys = a.present_key + slab;
  const float* values = a.present_value + slab;
  const int64_t count = min(phase.past + s + 1, phase.valid);  // causal
  float largest = -INFINITY;
  for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
    const float* k = keys + j * a.depth;
    float dot = 0.0f;
    for (int64_t d = 0; d < a.depth; ++d) dot += q[d] * k[d];
    scores[j] = dot * a.scale;
    largest = fmaxf(largest, scores[j]);
  }
  largest = BlockReduce<Combine::kMax>(largest, scratch);
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
    scores[j] = expf(scores[j] - largest);
    sum += scores[j];
  }
  sum = BlockReduce<Combine::kSum>(sum, scratch);
  __syncthreads();  // every score is final before any thread reads them all
  const float inverse = 1.0f / sum;
  for (int64_t d = threadIdx.x; d < a.depth; d += blockDim.x) {
    float acc = 0.0f;
    for (int64_t j = 0; j < count; ++j) acc += scores[j] * values[j * a.depth + d];
    out[d] = acc * inverse;
  }
}

}  // namespace

void LaunchGroupQueryAttention(const GqaArgs& args, cudaStream_t stream) {
  if (args.batch == 0 || args.seq == 0) return;
  if (args.depth > kGqaMaxDepth || args.capacity > kGqaMaxCapacity) {
    throw sdk::Error(NXRT_STATUS_UNSUPPORTED,
                     "GroupQueryAttention: head size " + std::to_string(args.depth) +
                         " or KV capacity " + std::to_string(args.capacity) +
                         " exceeds the CUDA kernel's " + std::to_string(kGqaMaxDepth) + " and " +
                         std::to_string(kGqaMaxCapacity) + "; run it on the CPU EP");
  }
  AppendKvKernel<<<dim3(static_cast<unsigned>(args.capacity),
                        static_cast<unsigned>(args.batch * args.kv_heads)),
                   static_cast<unsigned>(args.depth), 0, stream>>>(args);
  CheckLaunch("GroupQueryAttention KV append kernel launch");
  const size_t shared_bytes =
      static_cast<size_t>(args.depth + kWarps + args.capacity) * sizeof(float);
  AttendKernel<<<dim3(static_cast<unsigned>(args.seq), static_cast<unsigned>(args.heads),
                      static_cast<unsigned>(args.batch)),
                 kThreads, shared_bytes, stream>>>(args);
  CheckLaunch("GroupQueryAttention attention kernel launch");
}

}  // namespace nxrt::cuda
