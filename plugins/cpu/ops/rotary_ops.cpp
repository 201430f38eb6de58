// RotaryEmbedding of the default domain (opset 23: X, cos_cache, sin_cache,
// optional position_ids) and of com.microsoft (input, position_ids as [B, S]
// or one offset, cos_cache, sin_cache). Both take X as [B, S, heads * head] or
// [B, heads, S, head] and rotate the first rotary_dim elements of every head
// by the angles of its token's position, through the shared RotateHead.
#include <string>

#include "attention/rotary.hpp"
#include "cpu_kernel.hpp"

namespace nxrt::cpu {
namespace {

class RotaryEmbeddingKernel : public CpuKernel {
 public:
  RotaryEmbeddingKernel(const sdk::Node& node, bool contrib)
      : CpuKernel(true),
        name_(std::string(node.op_type()) + " '" + std::string(node.name()) + "'"),
        contrib_(contrib),
        interleaved_(node.AttrInt("interleaved", 0) == 1),
        heads_attr_(node.AttrInt("num_heads", 0)),
        rotary_attr_(node.AttrInt("rotary_embedding_dim", 0)) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const size_t cos_index = contrib_ ? 2 : 1;
    const nxrt_tensor& cos = inputs[cos_index].tensor;
    const nxrt_tensor& sin = inputs[cos_index + 1].tensor;
    const size_t pos_index = contrib_ ? 1 : 3;
    const nxrt_tensor* positions =
        IsPresent(inputs, pos_index) ? &inputs[pos_index].tensor : nullptr;
    const std::span<const int64_t> dims = DimsSpan(x);
    const std::span<const int64_t> cos_dims = DimsSpan(cos);
    if (!std::ranges::equal(cos_dims, DimsSpan(sin)) || cos_dims.empty()) {
      Fail("cos_cache and sin_cache must have the same non-scalar shape");
    }
    const int64_t half = cos_dims.back();
    if (dims.size() != 3 && dims.size() != 4) Fail("input must be rank 3 or rank 4");
    const bool rank4 = dims.size() == 4;
    const int64_t batch = dims[0];
    const int64_t seq = rank4 ? dims[2] : dims[1];
    int64_t heads = rank4 ? dims[1] : heads_attr_;
    int64_t head = rank4 ? dims[3] : 0;
    if (!rank4) {
      // ONNX Runtime derives the head count from a full-width cache.
      if (heads <= 0 && contrib_) heads = dims[2] / (2 * half);
      if (heads <= 0 || dims[2] % heads != 0) {
        Fail("rank-3 input needs num_heads dividing its hidden size " + std::to_string(dims[2]));
      }
      head = dims[2] / heads;
    }
    const int64_t rotary_dim = contrib_ ? 2 * half : (rotary_attr_ > 0 ? rotary_attr_ : head);
    if (rotary_dim % 2 != 0 || rotary_dim > head || 2 * half != rotary_dim) {
      Fail("cos_cache's last dimension " + std::to_string(half) +
           " must be half the rotary dimension " + std::to_string(rotary_dim) +
           ", at most head size " + std::to_string(head));
    }
    // Cache rows: indexed by position, or (default domain without
    // position_ids) one row per token of [B, S, rotary_dim / 2].
    const bool per_token = !contrib_ && positions == nullptr;
    if (per_token && (cos_dims.size() != 3 || cos_dims[0] != batch || cos_dims[1] != seq)) {
      Fail("without position_ids, cos_cache must be [batch, sequence, rotary_dim / 2]");
    }
    if (!per_token && cos_dims.size() != 2)
      Fail("cos_cache must be [max_position, rotary_dim / 2]");
    const int64_t cache_rows = cos_dims[0];
    const bool offset_form = positions != nullptr && ElementCount(*positions) == 1 && contrib_;
    if (positions != nullptr && !offset_form && ElementCount(*positions) != batch * seq) {
      Fail("position_ids must be [batch, sequence]" +
           std::string(contrib_ ? " or one offset" : ""));
    }
    const int64_t* pos = positions ? DataAs<int64_t>(*positions) : nullptr;
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, x.dtype, dims);
    Dispatch(FloatTypes{}, x.dtype, name_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = DataAs<T>(x);
      T* y = MutableDataAs<T>(out);
      const T* cos_data = DataAs<T>(cos);
      const T* sin_data = DataAs<T>(sin);
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t s = 0; s < seq; ++s) {
          int64_t row = b * seq + s;
          if (!per_token) {
            row = offset_form ? pos[0] + s : pos[b * seq + s];
            if (row < 0 || row >= cache_rows) {
              Fail("position " + std::to_string(row) + " is outside cos_cache's " +
                   std::to_string(cache_rows) + " rows");
            }
          }
          for (int64_t n = 0; n < heads; ++n) {
            const int64_t at = rank4 ? ((b * heads + n) * seq + s) * head
                                     : (b * seq + s) * heads * head + n * head;
            RotateHead(in + at, y + at, cos_data + row * half, sin_data + row * half, head,
                       rotary_dim, interleaved_);
          }
        }
      }
    });
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const { FailInvalid(name_ + ": " + what); }

  std::string name_;
  bool contrib_;
  bool interleaved_;
  int64_t heads_attr_;
  int64_t rotary_attr_;
};

ClaimFn ClaimRotary(bool contrib) {
  return [contrib](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
    const std::string op(node.op_type());
    const size_t cos_index = contrib ? 2 : 1;
    for (size_t i : {size_t{0}, cos_index, cos_index + 1}) {
      if (auto reason = CheckInputDtype(node, inputs, i, FloatTypes{})) {
        return sdk::ClaimResult::Declined(*reason);
      }
      if (inputs[i].dtype != inputs[0].dtype) {
        return sdk::ClaimResult::Declined(op +
                                          ": cos_cache and sin_cache must have the input's "
                                          "dtype; mixed dtypes not implemented");
      }
    }
    const size_t pos_index = contrib ? 1 : 3;
    if (pos_index < inputs.size() && inputs[pos_index].kind != NXRT_VALUE_NONE &&
        inputs[pos_index].dtype != NXRT_DTYPE_INT64) {
      return sdk::ClaimResult::Declined(op + ": position_ids must be int64");
    }
    if (contrib) {
      if (pos_index >= inputs.size() || inputs[pos_index].kind == NXRT_VALUE_NONE) {
        return sdk::ClaimResult::Declined(op + ": position_ids is required");
      }
      if (node.AttrInt("is_packed_batching", 0) != 0) {
        return sdk::ClaimResult::Declined(op + ": is_packed_batching=1 not implemented");
      }
      if (node.AttrFloat("scale", 1.0f) != 1.0f) {
        return sdk::ClaimResult::Declined(op + ": scale other than 1 not implemented");
      }
    }
    return sdk::ClaimResult::Claimed();
  };
}

}  // namespace

void RegisterRotaryOps(OpRegistry& r) {
  r.Add("RotaryEmbedding",
        {23, ClaimRotary(false), [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
           return std::make_unique<RotaryEmbeddingKernel>(node, false);
         }});
  r.Add("RotaryEmbedding",
        {1, ClaimRotary(true),
         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
           return std::make_unique<RotaryEmbeddingKernel>(node, true);
         }},
        "com.microsoft");
}

}  // namespace nxrt::cpu
