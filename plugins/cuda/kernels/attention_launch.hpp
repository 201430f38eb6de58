// Host-callable launcher of com.microsoft GroupQueryAttention on the device.
// The valid lengths (seqlens_k) and total_sequence_length are read by the
// kernels from device memory, so a launch needs no host sync and may be
// recorded into a CUDA graph.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/attention_limits.hpp"
#include "nxrt/ep_abi.h"

namespace nxrt::cuda {

// Tensors of `dtype` (float32, float16 or bfloat16; the arithmetic is float),
// dense row-major. `past_key`/`past_value` may be null (no past) or equal the
// present buffers (fixed capacity: only new rows are written).
// `cos_cache`/`sin_cache` are null without rotary embedding.
struct GqaArgs {
  nxrt_dtype dtype = NXRT_DTYPE_UNDEFINED;
  const void* query = nullptr;     // [batch, seq, heads * depth]
  const void* key = nullptr;       // [batch, seq, kv_heads * depth]
  const void* value = nullptr;     // [batch, seq, kv_heads * depth]
  const void* past_key = nullptr;  // [batch, kv_heads, past_capacity, depth]
  const void* past_value = nullptr;
  const int32_t* seqlens_k = nullptr;              // [batch], valid total length - 1
  const int32_t* total_sequence_length = nullptr;  // one element
  const void* cos_cache = nullptr;                 // [cache_rows, rotary_dim / 2]
  const void* sin_cache = nullptr;
  void* output = nullptr;       // [batch, seq, heads * depth]
  void* present_key = nullptr;  // [batch, kv_heads, capacity, depth]
  void* present_value = nullptr;
  int64_t batch = 0;
  int64_t seq = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t depth = 0;
  int64_t past_capacity = 0;
  int64_t capacity = 0;
  int64_t rotary_dim = 0;  // 0: no rotary embedding
  int64_t cache_rows = 0;
  bool interleaved = false;
  float scale = 0.0f;
};

// Writes the new K (rotated) and V rows into the present caches, copying the
// valid past rows first when present and past are distinct buffers, then
// computes causal attention of each query row over its valid keys. Rows whose
// seqlens_k or rotary position is out of range come out as NaN.
void LaunchGroupQueryAttention(const GqaArgs& args, cudaStream_t stream);

}  // namespace nxrt::cuda
