#include "attention/attention_bias.hpp"

#include <limits>

#include "half.hpp"
#include "tensor.hpp"

namespace nxrt::cpu {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

float MaskValue(const nxrt_tensor& mask, int64_t index) {
  switch (mask.dtype) {
    case NXRT_DTYPE_BOOL:
      return DataAs<bool>(mask)[index] ? 0.0f : kNegInf;
    case NXRT_DTYPE_FLOAT32:
      return DataAs<float>(mask)[index];
    case NXRT_DTYPE_FLOAT64:
      return static_cast<float>(DataAs<double>(mask)[index]);
    case NXRT_DTYPE_FLOAT16:
      return DataAs<Float16>(mask)[index];
    case NXRT_DTYPE_BFLOAT16:
      return DataAs<BFloat16>(mask)[index];
    default:
      FailUnsupported("Attention: attn_mask must be bool or a float type");
  }
}

}  // namespace

void FillAttentionBias(const AttentionBiasRules& rules, int64_t b, int64_t h, float* bias) {
  const int64_t q_len = rules.q_len;
  const int64_t kv_len = rules.kv_len;
  // The mask's strides against [batch, heads, q_len, mask keys], right-aligned;
  // a broadcast axis has stride 0.
  int64_t mask_keys = 0;
  int64_t base = 0, q_stride = 0, k_stride = 0;
  if (rules.mask != nullptr) {
    const std::span<const int64_t> dims = DimsSpan(*rules.mask);
    const int64_t rank = static_cast<int64_t>(dims.size());
    const int64_t full[4] = {rules.batch, rules.heads, q_len, 0};
    const int64_t at[4] = {b, h, 0, 0};
    int64_t stride = 1;
    int64_t strides[4] = {0, 0, 0, 0};
    for (int64_t i = rank - 1; i >= 0; --i) {
      const int64_t axis = 4 - rank + i;
      if (axis < 0) FailInvalid("Attention: attn_mask has more than 4 dimensions");
      if (axis < 3 && dims[i] != 1 && dims[i] != full[axis]) {
        FailInvalid("Attention: attn_mask " + DimsText(dims) +
                    " does not broadcast to [batch, q_heads, q_len, kv_len]");
      }
      strides[axis] = dims[i] == 1 ? 0 : stride;
      stride *= dims[i];
    }
    mask_keys = rank ? dims[rank - 1] : 1;
    base = at[0] * strides[0] + at[1] * strides[1];
    q_stride = strides[2];
    k_stride = rank ? strides[3] : 0;
  }
  int64_t offset = rules.past;
  if (rules.past == 0 && rules.nonpad_kv != nullptr) offset = rules.nonpad_kv[b] - q_len;
  const int64_t valid_keys = rules.nonpad_kv != nullptr ? rules.nonpad_kv[b] : kv_len;
  for (int64_t i = 0; i < q_len; ++i) {
    float* row = bias + i * kv_len;
    const int64_t position = i + offset;
    for (int64_t j = 0; j < kv_len; ++j) {
      float v = 0.0f;
      if (rules.mask != nullptr) {
        v = j < mask_keys ? MaskValue(*rules.mask, base + i * q_stride + j * k_stride) : kNegInf;
      }
      const int64_t diff = position - j;
      const bool excluded =
          (rules.causal && diff < 0) || (rules.left_window >= 0 && diff > rules.left_window) ||
          (rules.right_window >= 0 && -diff > rules.right_window) || j >= valid_keys;
      row[j] = excluded ? kNegInf : v;
    }
  }
}

}  // namespace nxrt::cpu
