// Host-callable launcher of RotaryEmbedding (default domain and
// com.microsoft) on the device. Positions are read by the kernel from device
// memory, so a launch needs no host sync and may be recorded into a CUDA
// graph.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "nxrt/ep_abi.h"

namespace nxrt::cuda {

// `input`, `output`, `cos_cache` and `sin_cache` share `dtype` (float32,
// float16 or bfloat16); the cache rows hold rotary_dim / 2 entries.
struct RotaryArgs {
  nxrt_dtype dtype = NXRT_DTYPE_UNDEFINED;
  const void* input = nullptr;  // [batch, seq, heads * head_size] or [batch, heads, seq, head_size]
  const void* cos_cache = nullptr;
  const void* sin_cache = nullptr;
  // Null: the caches hold one row per token ([batch, seq, rotary_dim / 2]).
  const int64_t* position_ids = nullptr;
  bool single_offset = false;  // position_ids is one offset: token s sits at offset + s
  void* output = nullptr;
  int64_t batch = 0;
  int64_t seq = 0;
  int64_t heads = 0;
  int64_t head_size = 0;
  int64_t rotary_dim = 0;
  int64_t cache_rows = 0;
  bool heads_first = false;  // input is [batch, heads, seq, head_size]
  bool interleaved = false;
};

// Rotates the first rotary_dim elements of every head and copies the rest.
// A token whose position lies outside the caches comes out as NaN.
void LaunchRotaryEmbedding(const RotaryArgs& args, cudaStream_t stream);

}  // namespace nxrt::cuda
