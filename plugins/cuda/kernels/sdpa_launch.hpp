// Host-callable launcher of the default-domain Attention (opsets 23 and 24)
// on the device: scaled dot-product attention with head grouping, an
// optional additive or boolean mask, a causal rule, softcap and a growing KV
// cache. Every extent is known on the host, so a launch needs no host sync
// and may be recorded into a CUDA graph.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "nxrt/ep_abi.h"

namespace nxrt::cuda {

// Q, K, V, the pasts, the output and the presents share `dtype` (float32,
// float16 or bfloat16; a 16-bit type rounds each step's result to it, as the
// specification's arithmetic does). Q/K/V and the output are
// [batch, heads, seq, width] when `heads_first`, else [batch, seq, heads *
// width]; the pasts and presents are [batch, kv_heads, rows, width].
struct AttentionArgs {
  nxrt_dtype dtype = NXRT_DTYPE_UNDEFINED;
  const void* query = nullptr;
  const void* key = nullptr;
  const void* value = nullptr;
  const void* past_key = nullptr;  // null without a past
  const void* past_value = nullptr;
  // Null without a mask. Its element for (b, h, i, j) sits at b * mask_strides[0]
  // + h * mask_strides[1] + i * mask_strides[2] + j * mask_strides[3]; keys at
  // or beyond mask_keys are masked out.
  const void* mask = nullptr;
  nxrt_dtype mask_dtype = NXRT_DTYPE_UNDEFINED;  // bool or a compute float type
  int64_t mask_strides[4] = {};
  int64_t mask_keys = 0;
  void* output = nullptr;
  void* present_key = nullptr;  // null when not requested
  void* present_value = nullptr;
  int64_t batch = 0;
  int64_t q_heads = 0;
  int64_t kv_heads = 0;
  int64_t q_len = 0;
  int64_t kv_len = 0;  // new K/V rows
  int64_t past = 0;    // past rows; keys are past + kv_len
  int64_t head = 0;    // Q and K head size
  int64_t v_head = 0;  // V and output head size
  bool heads_first = false;
  bool causal = false;  // key j is visible to query i when j <= i + past
  float scale = 0.0f;
  float softcap = 0.0f;  // 0: none
  // A 16-bit type's softmax steps are rounded to it (softmax_precision unset
  // or naming the type); otherwise the softmax is float.
  bool narrow_softmax = false;
};

// Writes the present caches (past rows, then the new ones) when requested,
// then each query row's softmax-weighted sum of V. A row whose every key is
// masked comes out as zeros.
void LaunchAttention(const AttentionArgs& args, cudaStream_t stream);

}  // namespace nxrt::cuda
