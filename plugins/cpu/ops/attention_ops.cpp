// Attention ops: com.microsoft GroupQueryAttention (ONNX Runtime's decoder
// attention with a KV cache and optional rotary embedding, matching ONNX
// Runtime's CPU kernel) and the default-domain Attention (opset 23, with its
// nonpad_kv_seqlen input from opset 24). Scores and weighted sums run per head
// in float32 through the shared helpers under attention/; scratch buffers are
// kept by the kernel and only grow, so steady-state calls allocate nothing.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "attention/head_products.hpp"
#include "attention/kv_slab.hpp"
#include "attention/masked_softmax.hpp"
#include "attention/rotary.hpp"
#include "cpu_kernel.hpp"

namespace nxrt::cpu {
namespace {

// Grows `buffer` to at least `size` elements and returns its data.
float* Scratch(std::vector<float>& buffer, int64_t size) {
  if (buffer.size() < static_cast<size_t>(size)) buffer.resize(static_cast<size_t>(size));
  return buffer.data();
}

std::string NodeText(const sdk::Node& node) {
  return std::string(node.op_type()) + " '" + std::string(node.name()) + "'";
}

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
};

class GroupQueryAttentionKernel : public CpuKernel {
 public:
  explicit GroupQueryAttentionKernel(const sdk::Node& node)
      : CpuKernel(true),
        name_(NodeText(node)),
        heads_(node.AttrInt("num_heads", 0)),
        kv_heads_(node.AttrInt("kv_num_heads", 0)),
        scale_(node.AttrFloat("scale", 0.0f)),
        softcap_(node.AttrFloat("softcap", 0.0f)),
        local_window_(node.AttrInt("local_window_size", -1)),
        rotary_(node.AttrInt("do_rotary", 0) == 1),
        interleaved_(node.AttrInt("rotary_interleaved", 0) == 1),
        smooth_(node.AttrInt("smooth_softmax", 0) == 1) {}

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
    const float* q_in = DataAs<float>(query);
    const float* k_in = packed ? q_in + heads_ * depth : DataAs<float>(inputs[kKey].tensor);
    const float* v_in =
        packed ? q_in + heads_ * depth + kv_width : DataAs<float>(inputs[kValue].tensor);
    const int64_t kv_stride = packed ? hidden : kv_width;
    if (!packed) {
      if (!IsPresent(inputs, kValue)) Fail("key and value must both be present or both absent");
      const Dims expected{batch, seq, kv_width};
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
    const float* cos_cache = nullptr;
    const float* sin_cache = nullptr;
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
      cos_cache = DataAs<float>(inputs[kCosCache].tensor);
      sin_cache = DataAs<float>(inputs[kSinCache].tensor);
    }

    nxrt_tensor& out =
        PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_FLOAT32, Dims{batch, seq, heads_ * depth});
    const Dims present_dims{batch, kv_heads_, capacity, depth};
    nxrt_tensor& present_k = PrepareOutput(ctx, outputs, 1, NXRT_DTYPE_FLOAT32, present_dims);
    nxrt_tensor& present_v = PrepareOutput(ctx, outputs, 2, NXRT_DTYPE_FLOAT32, present_dims);
    const float* past_k = has_past ? DataAs<float>(inputs[kPastKey].tensor) : nullptr;
    const float* past_v = has_past ? DataAs<float>(inputs[kPastValue].tensor) : nullptr;
    float* pk = MutableDataAs<float>(present_k);
    float* pv = MutableDataAs<float>(present_v);
    float* y = MutableDataAs<float>(out);

    const int64_t q_width = heads_ * depth;
    float* q_rot = rotary_ ? Scratch(q_scratch_, seq * q_width) : nullptr;
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
             std::to_string(past_capacity) + " and total_sequence_length " + std::to_string(total));
      }
      auto position = [&](int64_t s) -> int64_t {
        const int64_t p = first_prompt ? (s < valid ? s : 1) : past + s;
        if (p >= cache_rows) {
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
          const float* k_row = k_in + (token0 + s) * kv_stride + h * depth;
          const float* v_row = v_in + (token0 + s) * kv_stride + h * depth;
          float* k_dst = pk + at + (past + s) * depth;
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
      if (rotary_) {
        for (int64_t s = 0; s < seq; ++s) {
          const int64_t p = position(s);
          for (int64_t h = 0; h < heads_; ++h) {
            RotateHead(q_in + (token0 + s) * hidden + h * depth, q_rot + s * q_width + h * depth,
                       cos_cache + p * (rotary_dim / 2), sin_cache + p * (rotary_dim / 2), depth,
                       rotary_dim, interleaved_);
          }
        }
      }
      float* probs = Scratch(probs_scratch_, seq * valid);
      for (int64_t h = 0; h < heads_; ++h) {
        const ConstRows q = rotary_ ? ConstRows{q_rot + h * depth, q_width}
                                    : ConstRows{q_in + token0 * hidden + h * depth, hidden};
        const int64_t at = (b * kv_heads_ + h / group) * slab;
        ScoresQk(q, ConstRows{pk + at, depth}, seq, valid, depth, scale, Rows{probs, valid});
        for (int64_t s = 0; s < seq; ++s) {
          float* row = probs + s * valid;
          const int64_t keys = std::min(past + s + 1, valid);
          const int64_t start =
              local_window_ > 0 && keys > local_window_ ? keys - local_window_ : 0;
          std::fill(row, row + start, 0.0f);
          if (softcap_ > 0.0f) SoftcapInPlace(row + start, keys - start, softcap_);
          SoftmaxInPlace(row + start, keys - start, smooth_);
          std::fill(row + keys, row + valid, 0.0f);
        }
        WeightedSum(ConstRows{probs, valid}, ConstRows{pv + at, depth}, seq, valid, depth,
                    Rows{y + token0 * q_width + h * depth, q_width});
      }
    }
  }

 private:
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
  if (auto reason = CheckInputDtype(node, inputs, kQuery, TypeList<float>{})) {
    return sdk::ClaimResult::Declined(*reason +
                                      " (GroupQueryAttention is implemented for float32)");
  }
  for (size_t i : {kKey, kValue, kPastKey, kPastValue, kCosCache, kSinCache}) {
    if (i < inputs.size() && inputs[i].kind != NXRT_VALUE_NONE) {
      if (auto reason = CheckInputDtype(node, inputs, i, TypeList<float>{})) {
        return sdk::ClaimResult::Declined(*reason + " (input " + std::to_string(i) +
                                          " must be float32 like the query)");
      }
    }
  }
  for (size_t i : {kSeqlensK, kTotalSequenceLength}) {
    if (auto reason = CheckInputDtype(node, inputs, i, TypeList<int32_t>{})) {
      return sdk::ClaimResult::Declined(*reason);
    }
  }
  static constexpr const char* kNewerInputs[] = {"position_ids", "attention_bias", "head_sink",
                                                 "k_scale",      "v_scale",        "q_norm_weight",
                                                 "k_norm_weight"};
  for (size_t i = kSinCache + 1; i < inputs.size(); ++i) {
    if (inputs[i].kind != NXRT_VALUE_NONE) {
      const size_t n = i - kSinCache - 1;
      const std::string what = n < std::size(kNewerInputs) ? kNewerInputs[n] : "this input";
      return sdk::ClaimResult::Declined(op + ": input " + std::to_string(i) + " (" + what +
                                        ") not implemented; leave it empty");
    }
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

void RegisterAttentionOps(OpRegistry& r) {
  r.Add("GroupQueryAttention",
        {1, ClaimGroupQueryAttention,
         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
           return std::make_unique<GroupQueryAttentionKernel>(node);
         }},
        "com.microsoft");
}

}  // namespace nxrt::cpu
