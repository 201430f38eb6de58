// The additive bias the default-domain Attention adds to one head's scaled
// scores [q_len, kv_len] before its softmax: the attn_mask broadcast
// right-aligned to [batch, heads, q_len, kv_len] (bool: 0 where true, -inf
// where false; float: its value; keys beyond the mask's last axis -inf), plus
// -inf for keys the causal rule, the left/right window or nonpad_kv_seqlen
// exclude. Causal and window rules are bottom-right aligned at an offset: the
// past length with an internal cache, nonpad_kv_seqlen[b] - q_len with an
// external one, else 0.
#pragma once

#include <cstdint>

#include "nxrt/ep_abi.h"

namespace nxrt::cpu {

struct AttentionBiasRules {
  const nxrt_tensor* mask = nullptr;   // absent: no mask
  const int64_t* nonpad_kv = nullptr;  // absent: every key is valid
  bool causal = false;
  int64_t left_window = -1;   // -1: unbounded
  int64_t right_window = -1;  // -1: unbounded
  int64_t past = 0;           // past length of an internal cache
  int64_t batch = 0;
  int64_t heads = 0;
  int64_t q_len = 0;
  int64_t kv_len = 0;
};

// Fills bias[q_len * kv_len] for batch entry `b` and query head `h`.
void FillAttentionBias(const AttentionBiasRules& rules, int64_t b, int64_t h, float* bias);

}  // namespace nxrt::cpu
