// The default-domain Attention (opsets 23 and 24) with the CPU EP's
// semantics: Q/K/V rank 4 [batch, heads, seq, head] or rank 3 [batch, seq,
// heads * head] with q_num_heads and kv_num_heads; query head h reads KV head
// h / (q_heads / kv_heads); present = concat(past, new) along the sequence;
// the attn_mask broadcasts right-aligned to [batch, q_heads, q_len, keys];
// causal masking is bottom-right aligned at the past length. The geometry is
// fixed at creation from the concrete shapes; compute only launches.
#include <cmath>
#include <string>
#include <vector>

#include "kernels/cuda_kernel.hpp"
#include "kernels/kernel_factory.hpp"
#include "kernels/sdpa_launch.hpp"

namespace nxrt::cuda {
namespace {

enum AttentionInput : size_t {
  kQ = 0,
  kK = 1,
  kV = 2,
  kMask = 3,
  kPastKey = 4,
  kPastValue = 5,
};

bool Given(std::span<const nxrt_shape> shapes, size_t index) {
  return index < shapes.size() && shapes[index].dtype != NXRT_DTYPE_UNDEFINED;
}

bool Given(std::span<const nxrt_value> values, size_t index) {
  return index < values.size() && values[index].kind == NXRT_VALUE_TENSOR;
}

class AttentionKernel : public CudaKernel {
 public:
  AttentionKernel(const DeviceContext& context, const sdk::Node& node,
                  std::span<const nxrt_shape> shapes)
      : CudaKernel(context), name_("Attention '" + std::string(node.name()) + "'") {
    if (shapes.size() <= kV) Fail("needs Q, K and V");
    const nxrt_shape& q = shapes[kQ];
    const nxrt_shape& k = shapes[kK];
    const nxrt_shape& v = shapes[kV];
    if ((q.rank != 3 && q.rank != 4) || k.rank != q.rank || v.rank != q.rank) {
      Fail("Q, K and V must all be rank 3 or all rank 4");
    }
    args_.dtype = q.dtype;
    args_.heads_first = q.rank == 4;
    args_.batch = q.dims[0];
    if (args_.heads_first) {
      args_.q_heads = q.dims[1], args_.q_len = q.dims[2], args_.head = q.dims[3];
      args_.kv_heads = k.dims[1], args_.kv_len = k.dims[2], args_.v_head = v.dims[3];
      if (k.dims[3] != args_.head || v.dims[1] != args_.kv_heads || v.dims[2] != args_.kv_len) {
        Fail("K must be [batch, kv_heads, kv_len, head] and V [batch, kv_heads, kv_len, v_head]");
      }
    } else {
      args_.q_heads = node.AttrInt("q_num_heads", 0);
      args_.kv_heads = node.AttrInt("kv_num_heads", 0);
      if (args_.q_heads <= 0 || args_.kv_heads <= 0 || q.dims[2] % args_.q_heads != 0 ||
          k.dims[2] % args_.kv_heads != 0 || v.dims[2] % args_.kv_heads != 0) {
        Fail("rank-3 hidden sizes must be multiples of q_num_heads and kv_num_heads");
      }
      args_.q_len = q.dims[1], args_.head = q.dims[2] / args_.q_heads;
      args_.kv_len = k.dims[1], args_.v_head = v.dims[2] / args_.kv_heads;
      if (k.dims[2] / args_.kv_heads != args_.head || v.dims[1] != args_.kv_len) {
        Fail("K's head size must equal Q's, and V must have K's sequence length");
      }
    }
    if (k.dims[0] != args_.batch || v.dims[0] != args_.batch) {
      Fail("Q, K and V must have the same batch size");
    }
    if (args_.kv_heads <= 0 || args_.q_heads % args_.kv_heads != 0) {
      Fail("the query head count must be a multiple of the KV head count");
    }
    if (Given(shapes, kPastKey) != Given(shapes, kPastValue)) {
      Fail("past_key and past_value must be given together");
    }
    if (Given(shapes, kPastKey)) {
      const nxrt_shape& pk = shapes[kPastKey];
      const nxrt_shape& pv = shapes[kPastValue];
      args_.past = pk.rank == 4 ? pk.dims[2] : -1;
      const bool keys_fit = pk.rank == 4 && pk.dims[0] == args_.batch &&
                            pk.dims[1] == args_.kv_heads && pk.dims[3] == args_.head;
      const bool values_fit = pv.rank == 4 && pv.dims[0] == args_.batch &&
                              pv.dims[1] == args_.kv_heads && pv.dims[2] == args_.past &&
                              pv.dims[3] == args_.v_head;
      if (!keys_fit || !values_fit) {
        Fail(
            "past_key and past_value must be [batch, kv_heads, past, head] and [batch, "
            "kv_heads, past, v_head]");
      }
    }
    if (Given(shapes, kMask)) SetMask(shapes[kMask]);
    args_.causal = node.AttrInt("is_causal", 0) == 1;
    args_.softcap = node.AttrFloat("softcap", 0.0f);
    args_.scale = node.attr_type("scale") == NXRT_ATTR_UNDEFINED
                      ? 1.0f / std::sqrt(static_cast<float>(args_.head))
                      : node.AttrFloat("scale", 1.0f);
    // softmax_precision names an ONNX element type, as nxrt_dtype does.
    const int64_t precision = node.AttrInt("softmax_precision", 0);
    args_.narrow_softmax = args_.dtype != NXRT_DTYPE_FLOAT32 &&
                           (precision == 0 || precision == static_cast<int64_t>(args_.dtype));
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    AttentionArgs args = args_;
    const int64_t total = args.past + args.kv_len;
    const std::vector<int64_t> y_dims =
        args.heads_first ? std::vector<int64_t>{args.batch, args.q_heads, args.q_len, args.v_head}
                         : std::vector<int64_t>{args.batch, args.q_len, args.q_heads * args.v_head};
    args.output = Produce(ctx, outputs, 0, y_dims);
    if (Given(outputs, 1)) {
      args.present_key = Produce(ctx, outputs, 1, {args.batch, args.kv_heads, total, args.head});
    }
    if (Given(outputs, 2)) {
      args.present_value =
          Produce(ctx, outputs, 2, {args.batch, args.kv_heads, total, args.v_head});
    }
    args.query = inputs[kQ].tensor.data;
    args.key = inputs[kK].tensor.data;
    args.value = inputs[kV].tensor.data;
    if (Given(inputs, kMask)) args.mask = inputs[kMask].tensor.data;
    if (Given(inputs, kPastKey)) {
      args.past_key = inputs[kPastKey].tensor.data;
      args.past_value = inputs[kPastValue].tensor.data;
    }
    LaunchAttention(args, stream());
  }
  bool CaptureSafe() const override { return true; }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw sdk::Error(NXRT_STATUS_UNSUPPORTED, name_ + ": " + what);
  }

  // Output `index` at `dims`. A buffer the host preallocated at other dims
  // (a fixed-capacity cache) is refused rather than overrun.
  void* Produce(sdk::ComputeContext& ctx, std::span<nxrt_value> outputs, size_t index,
                const std::vector<int64_t>& dims) const {
    const nxrt_tensor& out = Output(ctx, outputs, index, args_.dtype, dims);
    if (DimsOf(out) != dims) {
      Fail("output " + std::to_string(index) +
           " was preallocated at other dims; CUDA Attention grows the present cache to past + "
           "new rows");
    }
    return out.data;
  }

  // The mask's strides against [batch, q_heads, q_len, mask keys],
  // right-aligned; a broadcast axis has stride 0.
  void SetMask(const nxrt_shape& mask) {
    const int64_t rank = static_cast<int64_t>(mask.rank);
    if (rank > 4) Fail("attn_mask has more than 4 dimensions");
    const int64_t full[3] = {args_.batch, args_.q_heads, args_.q_len};
    int64_t stride = 1;
    for (int64_t i = rank - 1; i >= 0; --i) {
      const int64_t axis = 4 - rank + i;
      if (axis < 3 && mask.dims[i] != 1 && mask.dims[i] != full[axis]) {
        Fail("attn_mask does not broadcast to [batch, q_heads, q_len, keys]");
      }
      args_.mask_strides[axis] = mask.dims[i] == 1 ? 0 : stride;
      stride *= mask.dims[i];
    }
    args_.mask_keys = rank > 0 ? mask.dims[rank - 1] : 1;
    args_.mask_dtype = mask.dtype;
  }

  std::string name_;
  AttentionArgs args_;
};

}  // namespace

std::unique_ptr<sdk::Kernel> MakeSdpaKernel(const DeviceContext& context, const sdk::Node& node,
                                            std::span<const nxrt_shape> inputs, int64_t) {
  if (node.domain().empty() && node.op_type() == "Attention") {
    return std::make_unique<AttentionKernel>(context, node, inputs);
  }
  return nullptr;
}

}  // namespace nxrt::cuda
