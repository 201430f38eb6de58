// The default-domain Attention (opset 23, with nonpad_kv_seqlen from opset
// 24 and the left/right windows of opset 25). Scores and weighted sums run
// per head in float32 through the shared helpers under attention/; scratch
// buffers are sized at kernel creation and kept, so steady-state calls
// allocate nothing.
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
#include "attention/kernel_support.hpp"
#include "attention/masked_softmax.hpp"
#include "cpu_kernel.hpp"

namespace nxrt::cpu {
namespace {

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
    const Geometry g = GeometryOf(shapes[kQ], shapes[kK], shapes[kV], PastLength(shapes));
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
    const Geometry g = GeometryOf(ShapeOf(q), ShapeOf(k), ShapeOf(v), past);
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

  static nxrt_shape ShapeOf(const nxrt_tensor& t) {
    return {sizeof(nxrt_shape), t.dtype, t.rank, t.dims};
  }

  Geometry GeometryOf(const nxrt_shape& q_shape, const nxrt_shape& k_shape,
                      const nxrt_shape& v_shape, int64_t past) const {
    Geometry g;
    const size_t rank = q_shape.rank;
    if ((rank != 3 && rank != 4) || k_shape.rank != rank || v_shape.rank != rank) {
      Fail("Q, K and V must all be rank 3 or all rank 4");
    }
    const int64_t* q = q_shape.dims;
    const int64_t* k = k_shape.dims;
    const int64_t* v = v_shape.dims;
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
  r.Add("Attention", {23, ClaimAttention,
                      [](const sdk::Node& node, std::span<const nxrt_shape> shapes, int64_t) {
                        return std::make_unique<AttentionKernel>(node, shapes);
                      }});
}

}  // namespace nxrt::cpu
