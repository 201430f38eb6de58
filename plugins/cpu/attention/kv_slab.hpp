// One head's slab [capacity, D] of a GroupQueryAttention present cache
// [B, kv_heads, capacity, D], made ready for the new rows. When present and
// past are one buffer (fixed-capacity decoding) nothing moves: the past rows
// are already in place. When they are separate buffers, the first `kept` rows
// are copied from the past slab and the rows after the new ones are zeroed, as
// ONNX Runtime leaves them. The caller then writes rows [kept, kept + added).
#pragma once

#include <algorithm>
#include <cstdint>

namespace nxrt::cpu {

template <typename T>
void PreparePresentSlab(const T* past, int64_t past_capacity, T* present, int64_t capacity,
                        int64_t depth, int64_t kept, int64_t added) {
  if (past == present && past_capacity == capacity) return;
  if (kept > 0) std::copy_n(past, kept * depth, present);
  std::fill(present + (kept + added) * depth, present + capacity * depth, T(0));
}

}  // namespace nxrt::cpu
