// Attention ops: com.microsoft GroupQueryAttention (ONNX Runtime's decoder
// attention with a KV cache and optional rotary embedding, matching ONNX
// Runtime's CPU kernel; float32 and float16) and the default-domain Attention
// (opset 23, with nonpad_kv_seqlen from opset 24 and the left/right windows of
// opset 25). Scores and weighted sums run per head in float32 through the
// shared helpers under attention/; scratch buffers are sized at kernel
// creation and kept, so steady-state calls allocate nothing.
#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "attention/attention_bias.hpp"
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

// Attention inputs and outputs (opset 23; nonpad_kv_seqlen from 24).
enum AttentionInput : size_t {
  kQ = 0,
  kK = 1,
  kV = 2,
  kAttnMask = 3,
  kPastK = 4,
  kPastV = 5,
  kNonpadKvSeqlen = 6,
};

// The default-domain Attention. Q, K and V are rank 4 [batch, heads, seq,
// head] or rank 3 [batch, seq, heads * head] with q_num_heads and
// kv_num_heads; query head h reads KV head h / (q_heads / kv_heads). Each head
// is gathered into float scratch (past rows, then new rows), so every float
// type computes in float; probabilities are rounded to the input type before
// the weighted sum, as the specification's function body casts them.
class AttentionKernel : public CpuKernel {
 public:
  AttentionKernel(const sdk::Node& node, std::span<const nxrt_shape> shapes)
      : CpuKernel(true),
        name_(NodeText(node)),
        causal_(node.AttrInt("is_causal", 0) == 1),
        q_heads_attr_(node.AttrInt("q_num_heads", 0)),
        kv_heads_attr_(node.AttrInt("kv_num_heads", 0)),
        scale_(node.attr_type("scale") == NXRT_ATTR_UNDEFINED ? std::optional<float>()
                                                              : node.AttrFloat("scale", 1.0f)),
        softcap_(node.AttrFloat("softcap", 0.0f)),
        qk_mode_(node.AttrInt("qk_matmul_output_mode", 0)),
        softmax_precision_(node.AttrInt("softmax_precision", 0)),
        left_window_(node.AttrInt("left_window_size", -1)),
        right_window_(node.AttrInt("right_window_size", -1)) {
    const Geometry g = GeometryOf(shapes[kQ].dims, shapes[kK].dims, shapes[kV].dims,
                                  shapes[kQ].rank, PastLength(shapes));
    ReserveScratch(g);
  }
  // Reads its geometry from each call and grows its scratch to it.
  bool ServesOtherShapes() const override { return true; }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& q = inputs[kQ].tensor;
    const nxrt_tensor& k = inputs[kK].tensor;
    const nxrt_tensor& v = inputs[kV].tensor;
    const bool has_past = IsPresent(inputs, kPastK) && IsPresent(inputs, kPastV);
    if (has_past && (inputs[kPastK].tensor.rank != 4 || inputs[kPastV].tensor.rank != 4)) {
      Fail("past_key and past_value must be rank 4 [batch, kv_heads, past, head]");
    }
    const int64_t past = has_past ? DimsSpan(inputs[kPastK].tensor)[2] : 0;
    const Geometry g = GeometryOf(q.dims, k.dims, v.dims, q.rank, past);
    if (has_past) {
      const std::array<int64_t, 4> pk{g.batch, g.kv_heads, past, g.head};
      const std::array<int64_t, 4> pv{g.batch, g.kv_heads, past, g.v_head};
      if (!std::ranges::equal(DimsSpan(inputs[kPastK].tensor), pk) ||
          !std::ranges::equal(DimsSpan(inputs[kPastV].tensor), pv)) {
        Fail("past_key and past_value must be " + DimsText(pk) + " and " + DimsText(pv));
      }
    }
    ReserveScratch(g);
    const int64_t total = g.total;
    const std::array<int64_t, 4> y4{g.batch, g.q_heads, g.q_len, g.v_head};
    const std::array<int64_t, 3> y3{g.batch, g.q_len, g.q_heads * g.v_head};
    const std::span<const int64_t> y_dims =
        g.rank4 ? std::span<const int64_t>(y4) : std::span<const int64_t>(y3);
    nxrt_tensor& y = PrepareOutput(ctx, outputs, 0, q.dtype, y_dims);
    nxrt_tensor* present_k = nullptr;
    nxrt_tensor* present_v = nullptr;
    nxrt_tensor* qk_out = nullptr;
    if (Requested(outputs, 1)) {
      present_k = &PrepareOutput(ctx, outputs, 1, q.dtype,
                                 std::array<int64_t, 4>{g.batch, g.kv_heads, total, g.head});
    }
    if (Requested(outputs, 2)) {
      present_v = &PrepareOutput(ctx, outputs, 2, v.dtype,
                                 std::array<int64_t, 4>{g.batch, g.kv_heads, total, g.v_head});
    }
    if (Requested(outputs, 3)) {
      qk_out = &PrepareOutput(ctx, outputs, 3, q.dtype,
                              std::array<int64_t, 4>{g.batch, g.q_heads, g.q_len, total});
    }
    AttentionBiasRules rules;
    rules.mask = IsPresent(inputs, kAttnMask) ? &inputs[kAttnMask].tensor : nullptr;
    rules.causal = causal_;
    rules.left_window = left_window_;
    rules.right_window = right_window_;
    rules.past = past;
    rules.batch = g.batch;
    rules.heads = g.q_heads;
    rules.q_len = g.q_len;
    rules.kv_len = total;
    if (IsPresent(inputs, kNonpadKvSeqlen)) {
      const nxrt_tensor& nonpad = inputs[kNonpadKvSeqlen].tensor;
      if (ElementCount(nonpad) != g.batch) Fail("nonpad_kv_seqlen must have batch_size entries");
      rules.nonpad_kv = DataAs<int64_t>(nonpad);
    }
    const float scale = scale_ ? *scale_ : 1.0f / std::sqrt(static_cast<float>(g.head));
    Dispatch(FloatTypes{}, q.dtype, name_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Run<T>(g, inputs, y, present_k, present_v, qk_out, rules, scale);
    });
  }

 private:
  struct Geometry {
    bool rank4 = false;
    int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, head = 0, v_head = 0;
    int64_t past = 0, total = 0;
  };

  static int64_t PastLength(std::span<const nxrt_shape> shapes) {
    return shapes.size() > kPastK && shapes[kPastK].rank == 4 ? shapes[kPastK].dims[2] : 0;
  }

  Geometry GeometryOf(const int64_t* q, const int64_t* k, const int64_t* v, size_t rank,
                      int64_t past) const {
    Geometry g;
    if (rank != 3 && rank != 4) Fail("Q, K and V must be rank 3 or rank 4");
    g.rank4 = rank == 4;
    g.batch = q[0];
    if (g.rank4) {
      g.q_heads = q[1], g.q_len = q[2], g.head = q[3];
      g.kv_heads = k[1], g.kv_len = k[2], g.v_head = v[3];
      if (k[3] != g.head || v[1] != g.kv_heads || v[2] != g.kv_len) {
        Fail("K must be [batch, kv_heads, kv_len, head] and V [batch, kv_heads, kv_len, v_head]");
      }
    } else {
      g.q_heads = q_heads_attr_, g.kv_heads = kv_heads_attr_;
      if (g.q_heads <= 0 || g.kv_heads <= 0)
        Fail("rank-3 inputs need q_num_heads and kv_num_heads");
      if (q[2] % g.q_heads != 0 || k[2] % g.kv_heads != 0 || v[2] % g.kv_heads != 0) {
        Fail("hidden sizes must be multiples of q_num_heads and kv_num_heads");
      }
      g.q_len = q[1], g.head = q[2] / g.q_heads;
      g.kv_len = k[1], g.v_head = v[2] / g.kv_heads;
      if (k[2] / g.kv_heads != g.head || v[1] != g.kv_len) {
        Fail("K's head size must equal Q's, and V must have K's sequence length");
      }
    }
    if (k[0] != g.batch || v[0] != g.batch) Fail("Q, K and V must have the same batch size");
    if (g.kv_heads <= 0 || g.q_heads % g.kv_heads != 0) {
      Fail("the query head count must be a multiple of the KV head count");
    }
    g.past = past;
    g.total = past + g.kv_len;
    return g;
  }

  void ReserveScratch(const Geometry& g) {
    Scratch(q_head_, g.q_len * g.head);
    Scratch(k_head_, g.total * g.head);
    Scratch(v_head_, g.total * g.v_head);
    Scratch(scores_, g.q_len * g.total);
    Scratch(bias_, g.q_len * g.total);
    Scratch(y_head_, g.q_len * g.v_head);
  }

  static bool Requested(std::span<nxrt_value> outputs, size_t index) {
    return index < outputs.size() && outputs[index].kind == NXRT_VALUE_TENSOR;
  }

  // Element offset of (b, head, s, 0) in a Q, K or V tensor of `heads` heads.
  static int64_t At(const Geometry& g, int64_t b, int64_t head, int64_t s, int64_t heads,
                    int64_t len, int64_t width) {
    return g.rank4 ? ((b * heads + head) * len + s) * width
                   : (b * len + s) * heads * width + head * width;
  }

  template <typename T>
  void Run(const Geometry& g, std::span<const nxrt_value> inputs, nxrt_tensor& y,
           nxrt_tensor* present_k, nxrt_tensor* present_v, nxrt_tensor* qk_out,
           const AttentionBiasRules& rules, float scale) {
    const T* q = DataAs<T>(inputs[kQ].tensor);
    const T* k = DataAs<T>(inputs[kK].tensor);
    const T* v = DataAs<T>(inputs[kV].tensor);
    const T* past_k = g.past ? DataAs<T>(inputs[kPastK].tensor) : nullptr;
    const T* past_v = g.past ? DataAs<T>(inputs[kPastV].tensor) : nullptr;
    T* out = MutableDataAs<T>(y);
    T* qk = qk_out ? MutableDataAs<T>(*qk_out) : nullptr;
    const int64_t total = g.total;
    const int64_t group = g.q_heads / g.kv_heads;
    float* qh = q_head_.data();
    float* kh = k_head_.data();
    float* vh = v_head_.data();
    float* scores = scores_.data();
    float* bias = bias_.data();
    float* yh = y_head_.data();
    // A 16-bit type follows the specification's arithmetic in that type: Q
    // and K each scaled by sqrt(scale), and scores, bias sums and the softmax
    // steps rounded to the type (the softmax unless softmax_precision asks
    // for a wider one).
    const float root_scale = Round<T>(std::sqrt(scale));
    const bool narrow_softmax =
        kNarrow<T> && (softmax_precision_ == 0 || softmax_precision_ == TensorProtoType<T>());
    for (int64_t b = 0; b < g.batch; ++b) {
      for (int64_t kvh = 0; kvh < g.kv_heads; ++kvh) {
        // Present rows: the past's, then the new ones.
        auto gather = [&](const T* past_data, const T* fresh, int64_t width, float* dst,
                          nxrt_tensor* present) {
          T* pres = present ? MutableDataAs<T>(*present) + (b * g.kv_heads + kvh) * total * width
                            : nullptr;
          for (int64_t t = 0; t < total; ++t) {
            const T* row = t < g.past
                               ? past_data + ((b * g.kv_heads + kvh) * g.past + t) * width
                               : fresh + At(g, b, kvh, t - g.past, g.kv_heads, g.kv_len, width);
            for (int64_t d = 0; d < width; ++d) dst[t * width + d] = static_cast<float>(row[d]);
            if (pres) std::copy_n(row, width, pres + t * width);
          }
        };
        gather(past_k, k, g.head, kh, present_k);
        gather(past_v, v, g.v_head, vh, present_v);
        if constexpr (kNarrow<T>) {
          for (int64_t i = 0; i < total * g.head; ++i) kh[i] = Round<T>(kh[i] * root_scale);
        }
        for (int64_t h = kvh * group; h < (kvh + 1) * group; ++h) {
          for (int64_t s = 0; s < g.q_len; ++s) {
            const T* row = q + At(g, b, h, s, g.q_heads, g.q_len, g.head);
            for (int64_t d = 0; d < g.head; ++d) qh[s * g.head + d] = static_cast<float>(row[d]);
          }
          if constexpr (kNarrow<T>) {
            for (int64_t i = 0; i < g.q_len * g.head; ++i) qh[i] = Round<T>(qh[i] * root_scale);
          }
          ScoresQk(ConstRows{qh, g.head}, ConstRows{kh, g.head}, g.q_len, total, g.head,
                   kNarrow<T> ? 1.0f : scale, Rows{scores, total});
          const int64_t count = g.q_len * total;
          RoundAll<T>(scores, count);
          if (softcap_ > 0.0f) {
            if constexpr (kNarrow<T>) {
              for (int64_t i = 0; i < count; ++i) {
                scores[i] =
                    Round<T>(Round<T>(std::tanh(Round<T>(scores[i] / softcap_))) * softcap_);
              }
            } else {
              SoftcapInPlace(scores, count, softcap_);
            }
          }
          T* qk_head = qk ? qk + (b * g.q_heads + h) * count : nullptr;
          if (qk_head && qk_mode_ <= 1) Store(scores, qk_head, count);
          FillAttentionBias(rules, b, h, bias);
          RoundAll<T>(bias, count);
          for (int64_t i = 0; i < count; ++i) scores[i] += bias[i];
          RoundAll<T>(scores, count);
          if (qk_head && qk_mode_ == 2) Store(scores, qk_head, count);
          for (int64_t s = 0; s < g.q_len; ++s) {
            float* row = scores + s * total;
            const float* bias_row = bias + s * total;
            const bool all_masked = std::all_of(bias_row, bias_row + total,
                                                [](float x) { return std::isinf(x) && x < 0; });
            if (all_masked) {
              std::fill(row, row + total, 0.0f);
            } else if (narrow_softmax) {
              SoftmaxInType<T>(row, total);
            } else {
              SoftmaxInPlace(row, total, nullptr);
            }
          }
          if (qk_head && qk_mode_ == 3) Store(scores, qk_head, count);
          RoundAll<T>(scores, count);
          WeightedSum(ConstRows{scores, total}, ConstRows{vh, g.v_head}, g.q_len, total, g.v_head,
                      Rows{yh, g.v_head});
          for (int64_t s = 0; s < g.q_len; ++s) {
            Store(yh + s * g.v_head, out + At(g, b, h, s, g.q_heads, g.q_len, g.v_head), g.v_head);
          }
        }
      }
    }
  }

  template <typename T>
  static constexpr bool kNarrow = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

  template <typename T>
  static float Round(float x) {
    return static_cast<float>(static_cast<T>(x));
  }
  template <typename T>
  static void RoundAll(float* values, int64_t count) {
    if constexpr (kNarrow<T>) {
      for (int64_t i = 0; i < count; ++i) values[i] = Round<T>(values[i]);
    }
  }
  // The ONNX TensorProto element type number of T, as softmax_precision names it.
  template <typename T>
  static int64_t TensorProtoType() {
    return std::is_same_v<T, Float16> ? 10 : 16;
  }

  // Softmax with every step rounded to T. bfloat16 sums round at each
  // addition and float16 sums accumulate in float, as the specification's
  // reference arithmetic does.
  template <typename T>
  static void SoftmaxInType(float* row, int64_t count) {
    float max = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < count; ++i) max = std::max(max, row[i]);
    float sum = 0.0f;
    for (int64_t i = 0; i < count; ++i) {
      row[i] = Round<T>(std::exp(Round<T>(row[i] - max)));
      sum = std::is_same_v<T, BFloat16> ? Round<T>(sum + row[i]) : sum + row[i];
    }
    sum = Round<T>(sum);
    for (int64_t i = 0; i < count; ++i) row[i] = Round<T>(row[i] / sum);
  }

  template <typename T>
  static void Store(const float* src, T* dst, int64_t count) {
    for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<T>(src[i]);
  }

  [[noreturn]] void Fail(const std::string& what) const { FailInvalid(name_ + ": " + what); }

  std::string name_;
  bool causal_;
  int64_t q_heads_attr_;
  int64_t kv_heads_attr_;
  std::optional<float> scale_;
  float softcap_;
  int64_t qk_mode_;
  int64_t softmax_precision_;
  int64_t left_window_;
  int64_t right_window_;
  std::vector<float> q_head_, k_head_, v_head_, scores_, bias_, y_head_;
};

sdk::ClaimResult ClaimAttention(const sdk::Node& node, int64_t,
                                std::span<const nxrt_value_info> inputs) {
  const std::string op = NodeText(node);
  for (size_t i : {kQ, kK, kV}) {
    if (auto reason = CheckInputDtype(node, inputs, i, FloatTypes{})) {
      return sdk::ClaimResult::Declined(*reason);
    }
  }
  const nxrt_dtype dtype = inputs[kQ].dtype;
  const auto present = [&](size_t i) {
    return i < inputs.size() && inputs[i].kind != NXRT_VALUE_NONE;
  };
  for (size_t i : {kK, kV, kPastK, kPastV}) {
    if (present(i) && inputs[i].dtype != dtype) {
      return sdk::ClaimResult::Declined(op + ": input " + std::to_string(i) + " has dtype " +
                                        DtypeName(inputs[i].dtype) + " but Q has " +
                                        DtypeName(dtype) + "; mixed dtypes not implemented");
    }
  }
  if (present(kPastK) != present(kPastV)) {
    return sdk::ClaimResult::Declined(op + ": past_key and past_value must be given together");
  }
  if (present(kAttnMask) && inputs[kAttnMask].dtype != NXRT_DTYPE_BOOL &&
      !Contains(FloatTypes{}, inputs[kAttnMask].dtype)) {
    return sdk::ClaimResult::Declined(op + ": attn_mask dtype " +
                                      DtypeName(inputs[kAttnMask].dtype) + " not supported");
  }
  if (present(kNonpadKvSeqlen)) {
    if (inputs[kNonpadKvSeqlen].dtype != NXRT_DTYPE_INT64) {
      return sdk::ClaimResult::Declined(op + ": nonpad_kv_seqlen must be int64");
    }
    if (present(kPastK)) {
      return sdk::ClaimResult::Declined(
          op + ": nonpad_kv_seqlen cannot be combined with past_key and past_value");
    }
  }
  const int64_t mode = node.AttrInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) {
    return sdk::ClaimResult::Declined(op + ": qk_matmul_output_mode " + std::to_string(mode) +
                                      " not implemented (0 to 3)");
  }
  return sdk::ClaimResult::Claimed();
}

}  // namespace

void RegisterAttentionOps(OpRegistry& r) {
  r.Add("GroupQueryAttention",
        {1, ClaimGroupQueryAttention,
         [](const sdk::Node& node, std::span<const nxrt_shape> shapes, int64_t) {
           return std::make_unique<GroupQueryAttentionKernel>(node, shapes);
         }},
        "com.microsoft");
  r.Add("Attention", {23, ClaimAttention,
                      [](const sdk::Node& node, std::span<const nxrt_shape> shapes, int64_t) {
                        return std::make_unique<AttentionKernel>(node, shapes);
                      }});
}

}  // namespace nxrt::cpu
