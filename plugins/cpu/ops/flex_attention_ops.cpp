// ai.onnx.preview FlexAttention: softmax((Q * s)(K * s)^T) V per head, with
// s the square root of `scale` (default 1/sqrt(head size)), grouped query
// heads sharing a KV head, and two optional graph attributes the host runs
// as bodies: score_mod rewrites the scores before the softmax, prob_mod the
// probabilities after it. Scores, softmax and the product with V are in
// float for float, float16 and bfloat16 inputs and in double for double;
// the scaled Q and K and the raw scores round through the input type first,
// as the ONNX reference computes them.
#include <cmath>
#include <string>
#include <vector>

#include "cpu_kernel.hpp"
#include "dtype.hpp"
#include "owned_value.hpp"

namespace nxrt::cpu {
namespace {

constexpr const char* kOp = "FlexAttention";

struct Geometry {
  int64_t batch = 0;
  int64_t q_heads = 0;
  int64_t kv_heads = 0;
  int64_t q_len = 0;
  int64_t kv_len = 0;
  int64_t head_size = 0;
  int64_t v_head_size = 0;
};

Geometry GeometryOf(const nxrt_tensor& q, const nxrt_tensor& k, const nxrt_tensor& v) {
  if (q.rank != 4 || k.rank != 4 || v.rank != 4) {
    FailInvalid(std::string(kOp) + ": Q, K and V must have rank 4; got " + DimsText(DimsSpan(q)) +
                ", " + DimsText(DimsSpan(k)) + ", " + DimsText(DimsSpan(v)));
  }
  const Geometry g{q.dims[0], q.dims[1], k.dims[1], q.dims[2], k.dims[2], q.dims[3], v.dims[3]};
  if (k.dims[0] != g.batch || v.dims[0] != g.batch || v.dims[1] != g.kv_heads ||
      v.dims[2] != g.kv_len || k.dims[3] != g.head_size) {
    FailInvalid(std::string(kOp) + ": K " + DimsText(DimsSpan(k)) + " and V " +
                DimsText(DimsSpan(v)) + " do not fit Q " + DimsText(DimsSpan(q)) +
                " (batch, KV heads, KV length and head size must agree)");
  }
  if (g.kv_heads <= 0 || g.q_heads % g.kv_heads != 0) {
    FailInvalid(std::string(kOp) + ": " + std::to_string(g.q_heads) +
                " query heads are not a multiple of " + std::to_string(g.kv_heads) + " KV heads");
  }
  return g;
}

// Runs the graph attribute `name` on `values` ([B, H, L, S] in compute type
// C) and copies its result back over them.
template <typename C>
void Modify(sdk::ComputeContext& ctx, const char* name, OwnedTensor& values) {
  const nxrt_value input = TensorValue(values.View());
  std::vector<nxrt_value> results = EmptyValues(1);
  ctx.RunSubgraph(name, {&input, 1}, results);
  const nxrt_tensor& out = results[0].tensor;
  if (results[0].kind != NXRT_VALUE_TENSOR || out.dtype != kDtypeOf<C> ||
      !DimsEqual(DimsSpan(out), values.dims())) {
    FailInvalid(std::string(kOp) + ": " + name + " must give a " + DtypeName(kDtypeOf<C>) +
                " tensor of its input's shape " + DimsText(values.dims()));
  }
  std::copy_n(DataAs<C>(out), ElementCount(values.dims()), reinterpret_cast<C*>(values.bytes()));
}

// x * root for `count` values, rounded to T as the reference's product in T.
template <typename T, typename C>
std::vector<T> Scaled(const T* x, int64_t count, T root) {
  std::vector<T> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    out[i] = static_cast<T>(static_cast<C>(x[i]) * static_cast<C>(root));
  }
  return out;
}

template <typename C>
void SoftmaxRows(C* rows, int64_t count, int64_t width) {
  for (int64_t r = 0; r < count; ++r) {
    C* row = rows + r * width;
    C max = row[0];
    for (int64_t j = 1; j < width; ++j) max = std::max(max, row[j]);
    C sum = 0;
    for (int64_t j = 0; j < width; ++j) {
      row[j] = std::exp(row[j] - max);
      sum += row[j];
    }
    for (int64_t j = 0; j < width; ++j) row[j] /= sum;
  }
}

class FlexAttentionKernel : public CpuKernel {
 public:
  FlexAttentionKernel(const sdk::Node& node, nxrt_dtype dtype)
      : CpuKernel(false),  // runs bodies
        dtype_(dtype),
        has_scale_(node.attr_type("scale") != NXRT_ATTR_UNDEFINED),
        scale_(node.AttrFloat("scale", 0.0f)),
        score_mod_(node.attr_type("score_mod") == NXRT_ATTR_GRAPH),
        prob_mod_(node.attr_type("prob_mod") == NXRT_ATTR_GRAPH) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& q = inputs[0].tensor;
    const nxrt_tensor& k = inputs[1].tensor;
    const nxrt_tensor& v = inputs[2].tensor;
    const Geometry g = GeometryOf(q, k, v);
    const Dims out_dims{g.batch, g.q_heads, g.q_len, g.v_head_size};
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, out_dims);
    Dispatch(FloatTypes{}, dtype_, kOp, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Run<T, ComputeType<T>>(ctx, g, DataAs<T>(q), DataAs<T>(k), DataAs<T>(v),
                             MutableDataAs<T>(out));
    });
  }

 private:
  template <typename T, typename C>
  void Run(sdk::ComputeContext& ctx, const Geometry& g, const T* q, const T* k, const T* v, T* y) {
    const float scale =
        has_scale_ ? scale_ : static_cast<float>(1.0 / std::sqrt(double(g.head_size)));
    const T root = static_cast<T>(std::sqrt(scale));
    const int64_t e = g.head_size;
    const int64_t heads_per_kv = g.q_heads / g.kv_heads;
    const std::vector<T> q_scaled = Scaled<T, C>(q, g.batch * g.q_heads * g.q_len * e, root);
    const std::vector<T> k_scaled = Scaled<T, C>(k, g.batch * g.kv_heads * g.kv_len * e, root);
    OwnedTensor scores(kDtypeOf<C>, {g.batch, g.q_heads, g.q_len, g.kv_len});
    C* s = reinterpret_cast<C*>(scores.bytes());
    for (int64_t b = 0; b < g.batch; ++b) {
      for (int64_t h = 0; h < g.q_heads; ++h) {
        const int64_t kv = b * g.kv_heads + h / heads_per_kv;
        const T* qh = q_scaled.data() + (b * g.q_heads + h) * g.q_len * e;
        const T* kh = k_scaled.data() + kv * g.kv_len * e;
        C* sh = s + (b * g.q_heads + h) * g.q_len * g.kv_len;
        for (int64_t i = 0; i < g.q_len; ++i) {
          for (int64_t j = 0; j < g.kv_len; ++j) {
            C dot = 0;
            for (int64_t p = 0; p < e; ++p) {
              dot += static_cast<C>(qh[i * e + p]) * static_cast<C>(kh[j * e + p]);
            }
            sh[i * g.kv_len + j] = static_cast<C>(static_cast<T>(dot));
          }
        }
      }
    }
    if (score_mod_) Modify<C>(ctx, "score_mod", scores);
    SoftmaxRows(s, g.batch * g.q_heads * g.q_len, g.kv_len);
    if (prob_mod_) Modify<C>(ctx, "prob_mod", scores);
    const int64_t ev = g.v_head_size;
    for (int64_t b = 0; b < g.batch; ++b) {
      for (int64_t h = 0; h < g.q_heads; ++h) {
        const T* vh = v + (b * g.kv_heads + h / heads_per_kv) * g.kv_len * ev;
        const C* ph = s + (b * g.q_heads + h) * g.q_len * g.kv_len;
        T* yh = y + (b * g.q_heads + h) * g.q_len * ev;
        for (int64_t i = 0; i < g.q_len; ++i) {
          for (int64_t c = 0; c < ev; ++c) {
            C sum = 0;
            for (int64_t j = 0; j < g.kv_len; ++j) {
              sum += ph[i * g.kv_len + j] * static_cast<C>(vh[j * ev + c]);
            }
            yh[i * ev + c] = static_cast<T>(sum);
          }
        }
      }
    }
  }

  nxrt_dtype dtype_;
  bool has_scale_;
  float scale_;
  bool score_mod_;
  bool prob_mod_;
};

sdk::ClaimResult ClaimFlexAttention(const sdk::Node& node, int64_t,
                                    std::span<const nxrt_value_info> inputs) {
  if (inputs.size() != 3) return sdk::ClaimResult::Declined("FlexAttention: takes Q, K and V");
  const nxrt_dtype dtype = inputs[0].dtype;
  if (!Contains(FloatTypes{}, dtype)) {
    return sdk::ClaimResult::Declined("FlexAttention: " + DtypeName(dtype) + " not implemented");
  }
  for (const nxrt_value_info& input : inputs) {
    if (input.kind != NXRT_VALUE_TENSOR || input.dtype != dtype) {
      return sdk::ClaimResult::Declined("FlexAttention: Q, K and V must be tensors of one type");
    }
  }
  if (node.attr_type("softmax_precision") != NXRT_ATTR_UNDEFINED) {
    // The compute type this kernel uses is the only precision it offers.
    const int64_t precision = node.AttrInt("softmax_precision", 0);
    const nxrt_dtype compute =
        dtype == NXRT_DTYPE_FLOAT64 ? NXRT_DTYPE_FLOAT64 : NXRT_DTYPE_FLOAT32;
    if (precision != compute) {
      return sdk::ClaimResult::Declined("FlexAttention: softmax_precision " +
                                        std::to_string(precision) + " for " + DtypeName(dtype) +
                                        " inputs not implemented");
    }
  }
  for (const char* name : {"score_mod", "prob_mod"}) {
    if (node.attr_type(name) == NXRT_ATTR_UNDEFINED) continue;
    if (node.attr_type(name) != NXRT_ATTR_GRAPH) {
      return sdk::ClaimResult::Declined(std::string("FlexAttention: ") + name + " must be a graph");
    }
    const auto [body_inputs, body_outputs] = node.AttrGraph(name);
    if (body_inputs != 1 || body_outputs != 1) {
      return sdk::ClaimResult::Declined(std::string("FlexAttention: ") + name +
                                        " must take one input and give one output");
    }
  }
  return sdk::ClaimResult::Claimed();
}

}  // namespace

void RegisterFlexAttentionOps(OpRegistry& r) {
  r.Add("FlexAttention",
        {1, ClaimFlexAttention,
         [](const sdk::Node& node, std::span<const nxrt_shape> shapes, int64_t) {
           return std::make_unique<FlexAttentionKernel>(node, shapes[0].dtype);
         }},
        "ai.onnx.preview");
}

}  // namespace nxrt::cpu
