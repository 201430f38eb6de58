// com.microsoft GroupQueryAttention: ONNX Runtime's decoder attention with a
// KV cache and optional rotary embedding, matching ONNX Runtime's CPU kernel
// (float32 and float16). Scores and weighted sums run per head in float32
// through the shared helpers under attention/; scratch buffers are sized at
// kernel creation and kept, so steady-state calls allocate nothing.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "attention/head_products.hpp"
#include "attention/kernel_support.hpp"
#include "attention/kv_slab.hpp"
#include "attention/masked_softmax.hpp"
#include "attention/rotary.hpp"
#include "cpu_kernel.hpp"

namespace nxrt::cpu {
namespace {

// GroupQueryAttention inputs.
enum GqaInput : size_t {
  kQuery = 0,
  kKey = 1,
  kValue = 2,
  kPastKey = 3,
  kPastValue = 4,
  kSeqlensK = 5,
  kTotalSequenceLength = 6,
  kCosCache = 7,
  kSinCache = 8,
  kPositionIds = 9,
  kAttentionBias = 10,
  kHeadSink = 11,
};

class GroupQueryAttentionKernel : public CpuKernel {
 public:
  // Scratch is sized for the shapes the kernel is made for, so compute
  // allocates only for a longer total; every extent is read from the call,
  // so one kernel serves every shape of the node's ranks.
  GroupQueryAttentionKernel(const sdk::Node& node, std::span<const nxrt_shape> shapes)
      : CpuKernel(true),
        name_(NodeText(node)),
        heads_(node.AttrInt("num_heads", 0)),
        kv_heads_(node.AttrInt("kv_num_heads", 0)),
        scale_(node.AttrFloat("scale", 0.0f)),
        softcap_(node.AttrFloat("softcap", 0.0f)),
        local_window_(node.AttrInt("local_window_size", -1)),
        rotary_(node.AttrInt("do_rotary", 0) == 1),
        interleaved_(node.AttrInt("rotary_interleaved", 0) == 1),
        smooth_(node.AttrInt("smooth_softmax", 0) == 1) {
    PresizeScratch(shapes);
  }
  bool ServesOtherShapes() const override { return true; }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& query = inputs[kQuery].tensor;
    const std::span<const int64_t> qdims = DimsSpan(query);
    if (qdims.size() != 3) Fail("query must be rank 3 [batch, sequence, hidden]");
    const int64_t batch = qdims[0], seq = qdims[1], hidden = qdims[2];
    const bool packed = !IsPresent(inputs, kKey);
    const int64_t parts = packed ? heads_ + 2 * kv_heads_ : heads_;
    if (hidden % parts != 0) Fail("query hidden size is not a multiple of the head count");
    const int64_t depth = hidden / parts;
    const int64_t kv_width = kv_heads_ * depth;
    const int64_t kv_stride = packed ? hidden : kv_width;
    if (!packed) {
      if (!IsPresent(inputs, kValue)) Fail("key and value must both be present or both absent");
      const std::array<int64_t, 3> expected{batch, seq, kv_width};
      if (!std::ranges::equal(DimsSpan(inputs[kKey].tensor), expected) ||
          !std::ranges::equal(DimsSpan(inputs[kValue].tensor), expected)) {
        Fail("key and value must be " + DimsText(expected));
      }
    }

    const bool has_past = IsPresent(inputs, kPastKey) && IsPresent(inputs, kPastValue);
    int64_t past_capacity = 0;
    if (has_past) {
      const std::span<const int64_t> pk = DimsSpan(inputs[kPastKey].tensor);
      if (pk.size() != 4 || pk[0] != batch || pk[1] != kv_heads_ || pk[3] != depth ||
          !std::ranges::equal(pk, DimsSpan(inputs[kPastValue].tensor))) {
        Fail("past_key and past_value must both be [batch, kv_num_heads, past, head_size] = [" +
             std::to_string(batch) + "," + std::to_string(kv_heads_) + ",past," +
             std::to_string(depth) + "]");
      }
      past_capacity = pk[2];
    }
    const nxrt_tensor& seqlens_t = inputs[kSeqlensK].tensor;
    if (ElementCount(seqlens_t) != batch) Fail("seqlens_k must have batch_size entries");
    const int32_t* seqlens = DataAs<int32_t>(seqlens_t);
    if (ElementCount(inputs[kTotalSequenceLength].tensor) != 1) {
      Fail("total_sequence_length must have one element");
    }
    const int64_t total = *DataAs<int32_t>(inputs[kTotalSequenceLength].tensor);
    const int64_t capacity = std::max(total, past_capacity);

    // ONNX Runtime's phases: the first prompt sees no past; a later prompt
    // (batch 1) or a decode step (one token) follows the past.
    const bool later_prompt = seq > 1 && seq != total;
    if (later_prompt && batch != 1) Fail("a prompt continuing a past must have batch size 1");
    const bool first_prompt = !later_prompt && seq == total;
    if (!first_prompt && !later_prompt && seq != 1) {
      Fail("sequence length must be 1 when it is not a prompt");
    }

    int64_t rotary_dim = 0;
    int64_t cache_rows = 0;
    if (rotary_) {
      if (!IsPresent(inputs, kCosCache) || !IsPresent(inputs, kSinCache)) {
        Fail("do_rotary=1 needs cos_cache and sin_cache");
      }
      const std::span<const int64_t> cd = DimsSpan(inputs[kCosCache].tensor);
      if (cd.size() != 2 || !std::ranges::equal(cd, DimsSpan(inputs[kSinCache].tensor)) ||
          cd[1] * 2 > depth) {
        Fail(
            "cos_cache and sin_cache must both be [max_position, rotary_dim / 2] with rotary_dim "
            "<= head_size " +
            std::to_string(depth));
      }
      rotary_dim = cd[1] * 2;
      cache_rows = cd[0];
    }

    const int64_t* position_ids = nullptr;
    if (rotary_ && IsPresent(inputs, kPositionIds)) {
      const nxrt_tensor& ids = inputs[kPositionIds].tensor;
      if (ElementCount(ids) < (first_prompt ? 1 : batch * seq)) {
        Fail("position_ids must be [batch, sequence]");
      }
      position_ids = DataAs<int64_t>(ids);
    }
    // attention_bias: [batch or 1, num_heads or 1, sequence, total], added to
    // the scores (after softcap) of the keys each query attends.
    std::span<const int64_t> bias_dims;
    if (IsPresent(inputs, kAttentionBias)) {
      bias_dims = DimsSpan(inputs[kAttentionBias].tensor);
      if (bias_dims.size() != 4 || (bias_dims[0] != 1 && bias_dims[0] != batch) ||
          (bias_dims[1] != 1 && bias_dims[1] != heads_) || bias_dims[2] != seq ||
          bias_dims[3] < total) {
        Fail(
            "attention_bias must be [batch or 1, num_heads or 1, sequence, total_sequence_length]");
      }
    }
    if (IsPresent(inputs, kHeadSink) && ElementCount(inputs[kHeadSink].tensor) != heads_) {
      Fail("head_sink must have num_heads entries");
    }
    const nxrt_dtype dtype = query.dtype;
    const std::array<int64_t, 3> out_dims{batch, seq, heads_ * depth};
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype, out_dims);
    const std::array<int64_t, 4> present_dims{batch, kv_heads_, capacity, depth};
    nxrt_tensor& present_k = PrepareOutput(ctx, outputs, 1, dtype, present_dims);
    nxrt_tensor& present_v = PrepareOutput(ctx, outputs, 2, dtype, present_dims);
    Dispatch(TypeList<float, Float16>{}, dtype, name_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      // float32 heads are read in place; float16 ones are widened into float
      // scratch, rounded through T where ONNX Runtime keeps T (rotated Q).
      constexpr bool kWiden = !std::is_same_v<T, float>;
      const T* q_in = DataAs<T>(query);
      const T* k_in = packed ? q_in + heads_ * depth : DataAs<T>(inputs[kKey].tensor);
      const T* v_in = packed ? q_in + heads_ * depth + kv_width : DataAs<T>(inputs[kValue].tensor);
      const T* cos_cache = rotary_ ? DataAs<T>(inputs[kCosCache].tensor) : nullptr;
      const T* sin_cache = rotary_ ? DataAs<T>(inputs[kSinCache].tensor) : nullptr;
      const T* past_k = has_past ? DataAs<T>(inputs[kPastKey].tensor) : nullptr;
      const T* past_v = has_past ? DataAs<T>(inputs[kPastValue].tensor) : nullptr;
      T* pk = MutableDataAs<T>(present_k);
      T* pv = MutableDataAs<T>(present_v);
      T* y = MutableDataAs<T>(out);
      const T* bias =
          IsPresent(inputs, kAttentionBias) ? DataAs<T>(inputs[kAttentionBias].tensor) : nullptr;
      const T* head_sink =
          IsPresent(inputs, kHeadSink) ? DataAs<T>(inputs[kHeadSink].tensor) : nullptr;
      // The sink logit of query head h: ONNX Runtime's smooth softmax is a
      // sink of 0.
      float sink = 0.0f;
      auto sink_at = [&](int64_t h) -> const float* {
        if (head_sink == nullptr) return smooth_ ? &sink : nullptr;
        sink = static_cast<float>(head_sink[h]);
        return &sink;
      };

      const int64_t q_width = heads_ * depth;
      const bool q_scratch = rotary_ || kWiden;
      float* q_rot = q_scratch ? Scratch(q_scratch_, seq * q_width) : nullptr;
      const int64_t group = heads_ / kv_heads_;
      const int64_t slab = capacity * depth;
      const float scale = scale_ == 0.0f ? 1.0f / std::sqrt(static_cast<float>(depth)) : scale_;

      for (int64_t b = 0; b < batch; ++b) {
        const int64_t valid = static_cast<int64_t>(seqlens[b]) + 1;
        const int64_t past = first_prompt ? 0 : valid - seq;
        if (valid < 1 || valid > capacity || past < 0 || past + seq > capacity ||
            (past > 0 && (!has_past || past > past_capacity))) {
          Fail("seqlens_k[" + std::to_string(b) + "] = " + std::to_string(seqlens[b]) +
               " does not fit sequence length " + std::to_string(seq) + ", past capacity " +
               std::to_string(past_capacity) + " and total_sequence_length " +
               std::to_string(total));
        }
        auto position = [&](int64_t s) -> int64_t {
          // Without position_ids every prompt token, padding included, sits
          // at its own index. With them, a first prompt offsets its tokens
          // from position_ids[0] and later calls read one per token, as ONNX
          // Runtime does.
          int64_t p = past + s;
          if (position_ids != nullptr) {
            p = first_prompt ? position_ids[0] + s : position_ids[b * seq + s];
          }
          if (p < 0 || p >= cache_rows) {
            Fail("position " + std::to_string(p) + " is beyond the " + std::to_string(cache_rows) +
                 " rows of cos_cache");
          }
          return p;
        };
        const int64_t token0 = b * seq;
        for (int64_t h = 0; h < kv_heads_; ++h) {
          const int64_t at = (b * kv_heads_ + h) * slab;
          const int64_t past_at = (b * kv_heads_ + h) * past_capacity * depth;
          PreparePresentSlab(past_k ? past_k + past_at : nullptr, past_capacity, pk + at, capacity,
                             depth, past, seq);
          PreparePresentSlab(past_v ? past_v + past_at : nullptr, past_capacity, pv + at, capacity,
                             depth, past, seq);
          for (int64_t s = 0; s < seq; ++s) {
            const T* k_row = k_in + (token0 + s) * kv_stride + h * depth;
            const T* v_row = v_in + (token0 + s) * kv_stride + h * depth;
            T* k_dst = pk + at + (past + s) * depth;
            if (rotary_) {
              const int64_t p = position(s);
              RotateHead(k_row, k_dst, cos_cache + p * (rotary_dim / 2),
                         sin_cache + p * (rotary_dim / 2), depth, rotary_dim, interleaved_);
            } else {
              std::copy_n(k_row, depth, k_dst);
            }
            std::copy_n(v_row, depth, pv + at + (past + s) * depth);
          }
        }
        if (q_scratch) {
          for (int64_t s = 0; s < seq; ++s) {
            for (int64_t h = 0; h < heads_; ++h) {
              const T* q_row = q_in + (token0 + s) * hidden + h * depth;
              float* q_dst = q_rot + s * q_width + h * depth;
              if (rotary_) {
                const int64_t p = position(s);
                RotateHead(q_row, q_dst, cos_cache + p * (rotary_dim / 2),
                           sin_cache + p * (rotary_dim / 2), depth, rotary_dim, interleaved_);
                if constexpr (kWiden) {
                  for (int64_t d = 0; d < depth; ++d) q_dst[d] = static_cast<float>(T(q_dst[d]));
                }
              } else {
                for (int64_t d = 0; d < depth; ++d) q_dst[d] = static_cast<float>(q_row[d]);
              }
            }
          }
        }
        // A decode step (one token) multiplies the query heads sharing a KV
        // head as the rows of one product; longer calls take one head at a
        // time, its tokens as rows.
        const bool grouped = seq == 1;
        const int64_t rows = grouped ? group : seq;
        float* probs = Scratch(probs_scratch_, rows * valid);
        float* k_wide = kWiden ? Scratch(k_scratch_, valid * depth) : nullptr;
        float* v_wide = kWiden ? Scratch(v_scratch_, valid * depth) : nullptr;
        float* y_wide = kWiden ? Scratch(y_scratch_, rows * depth) : nullptr;
        const float* q_base = q_scratch ? q_rot : nullptr;
        const int64_t q_stride = grouped ? depth : (q_scratch ? q_width : hidden);
        for (int64_t block = 0; block < (grouped ? kv_heads_ : heads_); ++block) {
          const int64_t h0 = grouped ? block * group : block;
          const int64_t at = (b * kv_heads_ + h0 / group) * slab;
          ConstRows k{nullptr, depth}, v{nullptr, depth};
          Rows o{nullptr, depth};
          if constexpr (kWiden) {
            if (h0 % group == 0) {
              for (int64_t i = 0; i < valid * depth; ++i) {
                k_wide[i] = static_cast<float>(pk[at + i]);
                v_wide[i] = static_cast<float>(pv[at + i]);
              }
            }
            k.data = k_wide;
            v.data = v_wide;
            o.data = y_wide;
          } else {
            k.data = pk + at;
            v.data = pv + at;
            o = Rows{y + token0 * q_width + h0 * depth, grouped ? depth : q_width};
            if (!q_scratch) q_base = q_in + token0 * hidden;
          }
          const ConstRows q{q_base + h0 * depth, q_stride};
          ScoresQk(q, k, rows, valid, depth, scale, Rows{probs, valid});
          for (int64_t r = 0; r < rows; ++r) {
            float* row = probs + r * valid;
            const int64_t keys = std::min(past + (grouped ? 0 : r) + 1, valid);
            const int64_t start =
                local_window_ > 0 && keys > local_window_ ? keys - local_window_ : 0;
            std::fill(row, row + start, 0.0f);
            if (softcap_ > 0.0f) SoftcapInPlace(row + start, keys - start, softcap_);
            const int64_t head = grouped ? h0 + r : h0;
            if (bias != nullptr) {
              const int64_t token = grouped ? 0 : r;
              const T* bias_row =
                  bias +
                  (((bias_dims[0] == 1 ? 0 : b) * bias_dims[1] + (bias_dims[1] == 1 ? 0 : head)) *
                       seq +
                   token) *
                      bias_dims[3];
              for (int64_t j = start; j < keys; ++j) row[j] += static_cast<float>(bias_row[j]);
            }
            SoftmaxInPlace(row + start, keys - start, sink_at(head));
            std::fill(row + keys, row + valid, 0.0f);
          }
          WeightedSum(ConstRows{probs, valid}, v, rows, valid, depth, o);
          if constexpr (kWiden) {
            for (int64_t r = 0; r < rows; ++r) {
              T* dst = grouped ? y + token0 * q_width + (h0 + r) * depth
                               : y + (token0 + r) * q_width + h0 * depth;
              for (int64_t d = 0; d < depth; ++d) dst[d] = T(y_wide[r * depth + d]);
            }
          }
        }
      }
    });
  }

 private:
  // Sizes the scratch for `shapes` (a growing cache's total is past + new).
  void PresizeScratch(std::span<const nxrt_shape> shapes) {
    if (shapes.empty() || shapes[kQuery].rank != 3) return;
    const int64_t seq = shapes[kQuery].dims[1];
    const int64_t past =
        shapes.size() > kPastKey && shapes[kPastKey].rank == 4 ? shapes[kPastKey].dims[2] : 0;
    const int64_t parts =
        shapes.size() > kKey && shapes[kKey].rank == 3 ? heads_ : heads_ + 2 * kv_heads_;
    const int64_t depth = shapes[kQuery].dims[2] / parts;
    const bool widen = shapes[kQuery].dtype != NXRT_DTYPE_FLOAT32;
    const int64_t rows = std::max(seq, heads_ / kv_heads_);
    if (rotary_ || widen) Scratch(q_scratch_, seq * heads_ * depth);
    Scratch(probs_scratch_, rows * (past + seq));
    if (widen) {
      Scratch(k_scratch_, (past + seq) * depth);
      Scratch(v_scratch_, (past + seq) * depth);
      Scratch(y_scratch_, rows * depth);
    }
  }

  [[noreturn]] void Fail(const std::string& what) const { FailInvalid(name_ + ": " + what); }

  std::string name_;
  int64_t heads_;
  int64_t kv_heads_;
  float scale_;
  float softcap_;
  int64_t local_window_;
  bool rotary_;
  bool interleaved_;
  bool smooth_;
  std::vector<float> q_scratch_;
  std::vector<float> probs_scratch_;
  std::vector<float> k_scratch_, v_scratch_, y_scratch_;
};

sdk::ClaimResult ClaimGroupQueryAttention(const sdk::Node& node, int64_t,
                                          std::span<const nxrt_value_info> inputs) {
  const std::string op = NodeText(node);
  const int64_t heads = node.AttrInt("num_heads", 0);
  const int64_t kv_heads = node.AttrInt("kv_num_heads", 0);
  if (heads <= 0 || kv_heads <= 0 || heads % kv_heads != 0) {
    return sdk::ClaimResult::Declined(
        op +
        ": num_heads and kv_num_heads must be positive with num_heads a multiple of "
        "kv_num_heads");
  }
  if (auto reason = CheckInputDtype(node, inputs, kQuery, TypeList<float, Float16>{})) {
    return sdk::ClaimResult::Declined(*reason +
                                      " (GroupQueryAttention is implemented for float32 and "
                                      "float16)");
  }
  for (size_t i : {kKey, kValue, kPastKey, kPastValue, kCosCache, kSinCache}) {
    if (i < inputs.size() && inputs[i].kind != NXRT_VALUE_NONE &&
        inputs[i].dtype != inputs[kQuery].dtype) {
      return sdk::ClaimResult::Declined(op + ": input " + std::to_string(i) + " has dtype " +
                                        DtypeName(inputs[i].dtype) +
                                        "; it must have the query's dtype (quantized or mixed "
                                        "caches not implemented)");
    }
  }
  for (size_t i : {kSeqlensK, kTotalSequenceLength}) {
    if (auto reason = CheckInputDtype(node, inputs, i, TypeList<int32_t>{})) {
      return sdk::ClaimResult::Declined(*reason);
    }
  }
  for (size_t i : {kAttentionBias, kHeadSink}) {
    if (i < inputs.size() && inputs[i].kind != NXRT_VALUE_NONE &&
        inputs[i].dtype != inputs[kQuery].dtype) {
      return sdk::ClaimResult::Declined(op + ": input " + std::to_string(i) +
                                        " (attention_bias or head_sink) must have the query's "
                                        "dtype");
    }
  }
  static constexpr const char* kNewerInputs[] = {"k_scale", "v_scale", "q_norm_weight",
                                                 "k_norm_weight"};
  for (size_t i = kHeadSink + 1; i < inputs.size(); ++i) {
    if (inputs[i].kind == NXRT_VALUE_NONE) continue;
    const size_t n = i - kHeadSink - 1;
    const std::string what = n < std::size(kNewerInputs) ? kNewerInputs[n] : "this input";
    return sdk::ClaimResult::Declined(op + ": input " + std::to_string(i) + " (" + what +
                                      ") not implemented; leave it empty");
  }
  if (kPositionIds < inputs.size() && inputs[kPositionIds].kind != NXRT_VALUE_NONE &&
      inputs[kPositionIds].dtype != NXRT_DTYPE_INT64) {
    return sdk::ClaimResult::Declined(op + ": position_ids must be int64");
  }
  if (node.output_count() > 3) {
    return sdk::ClaimResult::Declined(op + ": output 3 (output_qk) not implemented");
  }
  for (size_t i : {size_t{1}, size_t{2}}) {
    if (i >= node.output_count() || node.output_name(i).value_or("").empty()) {
      return sdk::ClaimResult::Declined(
          op +
          ": present_key and present_value outputs are required (the kernel keeps the "
          "KV rows there); name both outputs");
    }
  }
  if (node.AttrInt("do_rotary", 0) == 1 &&
      (kSinCache >= inputs.size() || inputs[kCosCache].kind == NXRT_VALUE_NONE ||
       inputs[kSinCache].kind == NXRT_VALUE_NONE)) {
    return sdk::ClaimResult::Declined(op + ": do_rotary=1 needs cos_cache and sin_cache inputs");
  }
  const bool packed = inputs.size() <= kKey || inputs[kKey].kind == NXRT_VALUE_NONE;
  const bool has_value = inputs.size() > kValue && inputs[kValue].kind != NXRT_VALUE_NONE;
  if (packed == has_value) {
    return sdk::ClaimResult::Declined(op + ": key and value must both be given or both be empty");
  }
  for (const char* attr : {"qk_output", "sliding_window_cache", "kv_cache_bit_width"}) {
    if (node.AttrInt(attr, 0) != 0) {
      return sdk::ClaimResult::Declined(op + ": attribute " + attr +
                                        " other than 0 not implemented");
    }
  }
  if (node.AttrInt("causal", 1) != 1) {
    return sdk::ClaimResult::Declined(op + ": causal=0 (bidirectional) not implemented");
  }
  for (const char* attr : {"k_quant_type", "v_quant_type"}) {
    if (node.AttrString(attr, "NONE") != "NONE") {
      return sdk::ClaimResult::Declined(op + ": attribute " + attr +
                                        " (quantized KV cache) not implemented");
    }
  }
  return sdk::ClaimResult::Claimed();
}

}  // namespace

void RegisterGroupQueryAttentionOps(OpRegistry& r) {
  r.Add("GroupQueryAttention",
        {1, ClaimGroupQueryAttention,
         [](const sdk::Node& node, std::span<const nxrt_shape> shapes, int64_t) {
           return std::make_unique<GroupQueryAttentionKernel>(node, shapes);
         }},
        "com.microsoft");
}

}  // namespace nxrt::cpu
