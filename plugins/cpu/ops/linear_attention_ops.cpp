// LinearAttention (opset 27): attention through a recurrent (d_k, d_v) state
// per KV head instead of a softmax over all keys, as in linear transformers,
// GLA and (Gated) DeltaNet. Tokens are taken one at a time, exactly as the
// op's definition: the state decays by exp(decay) per key row (gated rules),
// gains k ⊗ v or, for the delta rules, k ⊗ beta (v - S^T k), and each query
// head of the KV head's group reads scale * q^T S. chunk_size is only a
// tuning hint for chunk-parallel algorithms and is ignored. 16-bit inputs are
// computed in float.
#include <cblas.h>

#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "cpu_kernel.hpp"

namespace nxrt::cpu {
namespace {

using HalfFloatTypes = TypeList<float, Float16, BFloat16>;

enum class UpdateRule { kLinear, kGated, kDelta, kGatedDelta };

std::optional<UpdateRule> ParseUpdateRule(const std::string& name) {
  if (name == "linear") return UpdateRule::kLinear;
  if (name == "gated") return UpdateRule::kGated;
  if (name == "delta") return UpdateRule::kDelta;
  if (name == "gated_delta") return UpdateRule::kGatedDelta;
  return std::nullopt;
}

bool IsGated(UpdateRule rule) {
  return rule == UpdateRule::kGated || rule == UpdateRule::kGatedDelta;
}
bool IsDelta(UpdateRule rule) {
  return rule == UpdateRule::kDelta || rule == UpdateRule::kGatedDelta;
}

// `t` as float: its own data when it is float, else widened into `scratch`.
const float* Widened(const nxrt_tensor& t, std::vector<float>& scratch) {
  if (t.dtype == kDtypeOf<float>) return DataAs<float>(t);
  scratch.resize(ElementCount(t));
  Dispatch(HalfFloatTypes{}, t.dtype, "LinearAttention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (size_t i = 0; i < scratch.size(); ++i) scratch[i] = static_cast<float>(DataAs<T>(t)[i]);
  });
  return scratch.data();
}

void Narrow(const std::vector<float>& values, nxrt_tensor& out) {
  Dispatch(HalfFloatTypes{}, out.dtype, "LinearAttention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (size_t i = 0; i < values.size(); ++i) MutableDataAs<T>(out)[i] = static_cast<T>(values[i]);
  });
}

class LinearAttentionKernel : public CpuKernel {
 public:
  LinearAttentionKernel(UpdateRule rule, int64_t q_heads, int64_t kv_heads, float scale)
      : CpuKernel(false), rule_(rule), q_heads_(q_heads), kv_heads_(kv_heads), scale_(scale) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& q = inputs[0].tensor;
    const nxrt_tensor& k = inputs[1].tensor;
    const nxrt_tensor& v = inputs[2].tensor;
    if (q.rank != 3 || k.rank != 3 || v.rank != 3 || q.dims[2] % q_heads_ != 0 ||
        k.dims[2] % kv_heads_ != 0 || v.dims[2] % kv_heads_ != 0) {
      FailInvalid("LinearAttention: query " + DimsText(DimsSpan(q)) + ", key " +
                  DimsText(DimsSpan(k)) + " and value " + DimsText(DimsSpan(v)) +
                  " are not (B, T, heads * d) for the attributes' head counts");
    }
    const int64_t batch = q.dims[0], length = q.dims[1];
    const int64_t dk = q.dims[2] / q_heads_, dv = v.dims[2] / kv_heads_;
    if (k.dims[0] != batch || v.dims[0] != batch || k.dims[1] != length || v.dims[1] != length ||
        k.dims[2] != kv_heads_ * dk) {
      FailInvalid("LinearAttention: key " + DimsText(DimsSpan(k)) + " and value " +
                  DimsText(DimsSpan(v)) + " do not match query " + DimsText(DimsSpan(q)));
    }
    const Dims state_dims{batch, kv_heads_, dk, dv};
    const bool has_past = IsPresent(inputs, 3);
    if (has_past && !DimsEqual(DimsSpan(inputs[3].tensor), state_dims)) {
      FailInvalid("LinearAttention: past_state is " + DimsText(DimsSpan(inputs[3].tensor)) +
                  ", expected " + DimsText(state_dims));
    }
    // Decay per key row ((B, T, H_kv * d_k)) or per head ((B, T, H_kv)); beta
    // per head or one for all heads.
    int64_t decay_width = 0, beta_width = 0;
    if (IsGated(rule_)) {
      decay_width = InputWidth(inputs, 4, "decay", batch, length, {kv_heads_ * dk, kv_heads_});
    }
    if (IsDelta(rule_)) {
      beta_width = InputWidth(inputs, 5, "beta", batch, length, {kv_heads_, 1});
    }

    const float* qf = Widened(q, q_scratch_);
    const float* kf = Widened(k, k_scratch_);
    const float* vf = Widened(v, v_scratch_);
    const float* decay = decay_width ? Widened(inputs[4].tensor, decay_scratch_) : nullptr;
    const float* beta = beta_width ? Widened(inputs[5].tensor, beta_scratch_) : nullptr;
    state_.assign(ElementCount(state_dims), 0.0f);
    if (has_past) {
      const float* past = Widened(inputs[3].tensor, past_scratch_);
      state_.assign(past, past + state_.size());
    }
    out_.assign(batch * length * q_heads_ * dv, 0.0f);
    write_.resize(dv);

    const int64_t group = q_heads_ / kv_heads_;
    const float scale = scale_ != 0.0f ? scale_ : 1.0f / std::sqrt(static_cast<float>(dk));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t h = 0; h < kv_heads_; ++h) {
        float* s = state_.data() + (b * kv_heads_ + h) * dk * dv;
        for (int64_t t = 0; t < length; ++t) {
          const int64_t token = b * length + t;
          const float* kt = kf + token * kv_heads_ * dk + h * dk;
          const float* vt = vf + token * kv_heads_ * dv + h * dv;
          if (decay) {
            const float* g = decay + token * decay_width;
            for (int64_t i = 0; i < dk; ++i) {
              const float factor = std::exp(decay_width == kv_heads_ ? g[h] : g[h * dk + i]);
              for (int64_t j = 0; j < dv; ++j) s[i * dv + j] *= factor;
            }
          }
          if (beta) {
            // The write is beta (v - S^T k), read from the decayed state.
            const float rate = beta[token * beta_width + (beta_width == 1 ? 0 : h)];
            for (int64_t j = 0; j < dv; ++j) write_[j] = 0.0f;
            for (int64_t i = 0; i < dk; ++i) {
              for (int64_t j = 0; j < dv; ++j) write_[j] += s[i * dv + j] * kt[i];  // S^T k
            }
            for (int64_t j = 0; j < dv; ++j) write_[j] = rate * (vt[j] - write_[j]);
          } else {
            write_.assign(vt, vt + dv);
          }
          for (int64_t i = 0; i < dk; ++i) {
            for (int64_t j = 0; j < dv; ++j) s[i * dv + j] += kt[i] * write_[j];
          }
          // The group's query heads are adjacent: out[group, dv] = scale q[group, dk] S.
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(group),
                      static_cast<int>(dv), static_cast<int>(dk), scale,
                      qf + (token * q_heads_ + h * group) * dk, static_cast<int>(dk), s,
                      static_cast<int>(dv), 0.0f, out_.data() + (token * q_heads_ + h * group) * dv,
                      static_cast<int>(dv));
        }
      }
    }

    const Dims out_dims{batch, length, q_heads_ * dv};
    Narrow(out_, PrepareOutput(ctx, outputs, 0, q.dtype, out_dims));
    if (outputs.size() > 1 && outputs[1].kind == NXRT_VALUE_TENSOR) {
      // Without a past state, the state takes the query's dtype.
      const nxrt_dtype state_dtype = has_past ? inputs[3].tensor.dtype : q.dtype;
      Narrow(state_, PrepareOutput(ctx, outputs, 1, state_dtype, state_dims));
    }
  }

 private:
  // The last dimension of (B, T, width) input `index`, which must be one of
  // `widths`.
  static int64_t InputWidth(std::span<const nxrt_value> inputs, size_t index, const char* name,
                            int64_t batch, int64_t length, std::initializer_list<int64_t> widths) {
    if (!IsPresent(inputs, index)) {
      FailInvalid(std::string("LinearAttention: ") + name + " is required by the update rule");
    }
    const nxrt_tensor& t = inputs[index].tensor;
    if (t.rank == 3 && t.dims[0] == batch && t.dims[1] == length) {
      for (int64_t w : widths) {
        if (t.dims[2] == w) return w;
      }
    }
    FailInvalid(std::string("LinearAttention: ") + name + " has shape " + DimsText(DimsSpan(t)) +
                ", which does not fit the query and head counts");
  }

  UpdateRule rule_;
  int64_t q_heads_, kv_heads_;
  float scale_;  // 0: 1 / sqrt(d_k)
  std::vector<float> q_scratch_, k_scratch_, v_scratch_, past_scratch_, decay_scratch_,
      beta_scratch_, state_, out_, write_;
};

}  // namespace

void RegisterLinearAttentionOps(OpRegistry& r) {
  r.Add("LinearAttention",
        {27,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           const std::string rule = node.AttrString("update_rule", "gated_delta");
           if (!ParseUpdateRule(rule)) {
             return sdk::ClaimResult::Declined("LinearAttention: update_rule=" + rule +
                                               " not implemented");
           }
           const int64_t q_heads = node.AttrInt("q_num_heads", 0);
           const int64_t kv_heads = node.AttrInt("kv_num_heads", 0);
           if (q_heads <= 0 || kv_heads <= 0 || q_heads % kv_heads != 0) {
             return sdk::ClaimResult::Declined(
                 "LinearAttention: q_num_heads must be a positive multiple of kv_num_heads");
           }
           for (size_t i = 0; i < inputs.size(); ++i) {
             if (i >= 3 && inputs[i].kind == NXRT_VALUE_NONE) continue;
             if (auto reason = CheckInputDtype(node, inputs, i, HalfFloatTypes{})) {
               return sdk::ClaimResult::Declined(*reason);
             }
           }
           return sdk::ClaimResult::Claimed();
         },
         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
           return std::make_unique<LinearAttentionKernel>(
               *ParseUpdateRule(node.AttrString("update_rule", "gated_delta")),
               node.AttrInt("q_num_heads", 0), node.AttrInt("kv_num_heads", 0),
               node.AttrFloat("scale", 0.0f));
         }});
}

}  // namespace nxrt::cpu
