// com.microsoft GroupQueryAttention in float32, float16 or bfloat16 (all of
// one type), with separate Q/K/V and an optional half-split or interleaved
// rotary embedding. The present caches are [batch, kv_heads, capacity,
// depth]. The capacity is known without reading total_sequence_length on the
// host: a preallocated output states it; a node whose declared present length
// is the past's (fixed-capacity decoding) keeps the past capacity; otherwise
// the cache grows to past + new rows, as shape inference has it.
#include <cmath>
#include <string>
#include <string_view>

#include "kernels/attention_launch.hpp"
#include "kernels/cuda_kernel.hpp"
#include "kernels/kernel_factory.hpp"

namespace nxrt::cuda {
namespace {

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

bool Given(std::span<const nxrt_shape> shapes, size_t index) {
  return index < shapes.size() && shapes[index].dtype != NXRT_DTYPE_UNDEFINED;
}

bool Given(std::span<const nxrt_value> inputs, size_t index) {
  return index < inputs.size() && inputs[index].kind == NXRT_VALUE_TENSOR;
}

class GroupQueryAttentionKernel : public CudaKernel {
 public:
  GroupQueryAttentionKernel(const DeviceContext& context, const sdk::Node& node,
                            std::span<const nxrt_shape> shapes)
      : CudaKernel(context), name_("GroupQueryAttention '" + std::string(node.name()) + "'") {
    args_.heads = node.AttrInt("num_heads", 0);
    args_.kv_heads = node.AttrInt("kv_num_heads", 0);
    args_.interleaved = node.AttrInt("rotary_interleaved", 0) == 1;
    if (shapes.size() <= kTotalSequenceLength || shapes[kQuery].rank != 3 || !Given(shapes, kKey) ||
        shapes[kKey].rank != 3 || !Given(shapes, kValue)) {
      Fail("needs query, key and value of rank 3; give them unpacked");
    }
    const nxrt_shape& query = shapes[kQuery];
    args_.dtype = query.dtype;
    args_.batch = query.dims[0];
    args_.seq = query.dims[1];
    if (args_.heads <= 0 || query.dims[2] % args_.heads != 0) {
      Fail("query hidden size is not a multiple of num_heads");
    }
    args_.depth = query.dims[2] / args_.heads;
    const int64_t kv_width = args_.kv_heads * args_.depth;
    for (size_t i : {kKey, kValue}) {
      const nxrt_shape& kv = shapes[i];
      if (kv.dims[0] != args_.batch || kv.dims[1] != args_.seq || kv.dims[2] != kv_width) {
        Fail("key and value must be [batch, sequence, kv_num_heads * head_size]");
      }
    }
    auto count = [](const nxrt_shape& shape) {
      int64_t n = 1;
      for (size_t d = 0; d < shape.rank; ++d) n *= shape.dims[d];
      return n;
    };
    if (count(shapes[kSeqlensK]) != args_.batch || count(shapes[kTotalSequenceLength]) != 1) {
      Fail("seqlens_k must have batch_size entries and total_sequence_length one");
    }
    if (Given(shapes, kPastKey) != Given(shapes, kPastValue)) {
      Fail("past_key and past_value must be given together");
    }
    if (Given(shapes, kPastKey)) {
      const nxrt_shape& past = shapes[kPastKey];
      if (past.rank != 4 || past.dims[0] != args_.batch || past.dims[1] != args_.kv_heads ||
          past.dims[3] != args_.depth) {
        Fail("past_key and past_value must be [batch, kv_num_heads, past, head_size]");
      }
      args_.past_capacity = past.dims[2];
      fixed_capacity_ = SameLength(node.input_info(kPastKey), node.output_info(1), past.dims[2]);
    }
    if (node.AttrInt("do_rotary", 0) == 1) {
      if (!Given(shapes, kCosCache) || !Given(shapes, kSinCache)) {
        Fail("do_rotary=1 needs cos_cache and sin_cache");
      }
      const nxrt_shape& cos = shapes[kCosCache];
      if (cos.rank != 2 || cos.dims[1] * 2 > args_.depth) {
        Fail("cos_cache and sin_cache must be [max_position, rotary_dim / 2] within the head");
      }
      args_.rotary_dim = cos.dims[1] * 2;
      args_.cache_rows = cos.dims[0];
    }
    const float scale = node.AttrFloat("scale", 0.0f);
    args_.scale = scale == 0.0f ? 1.0f / std::sqrt(static_cast<float>(args_.depth)) : scale;
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    for (size_t i : {kSeqlensK, kTotalSequenceLength}) {
      if (!Given(inputs, i) || inputs[i].tensor.memory != NXRT_MEMORY_DEVICE) {
        Fail("input " + std::to_string(i) +
             " is absent or in host memory; the CUDA kernel reads lengths on the device, so "
             "place the node on the CPU EP");
      }
    }
    GqaArgs args = args_;
    const int64_t width = args.heads * args.depth;
    nxrt_tensor& out =
        Output(ctx, outputs, 0, args.dtype, std::vector<int64_t>{args.batch, args.seq, width});
    // A preallocated present cache states its capacity; otherwise it grows.
    int64_t capacity = fixed_capacity_ ? args.past_capacity : args.past_capacity + args.seq;
    if (outputs[1].tensor.data != nullptr && outputs[1].tensor.rank == 4) {
      capacity = outputs[1].tensor.dims[2];
    }
    const std::vector<int64_t> present_dims{args.batch, args.kv_heads, capacity, args.depth};
    nxrt_tensor& present_key = Output(ctx, outputs, 1, args.dtype, present_dims);
    nxrt_tensor& present_value = Output(ctx, outputs, 2, args.dtype, present_dims);
    if (present_value.rank != 4 || present_value.dims[2] != capacity) {
      Fail("present_key and present_value must have the same capacity");
    }
    args.capacity = capacity;
    args.query = inputs[kQuery].tensor.data;
    args.key = inputs[kKey].tensor.data;
    args.value = inputs[kValue].tensor.data;
    if (Given(inputs, kPastKey)) {
      args.past_key = inputs[kPastKey].tensor.data;
      args.past_value = inputs[kPastValue].tensor.data;
    }
    args.seqlens_k = static_cast<const int32_t*>(inputs[kSeqlensK].tensor.data);
    args.total_sequence_length =
        static_cast<const int32_t*>(inputs[kTotalSequenceLength].tensor.data);
    if (args.rotary_dim > 0) {
      args.cos_cache = inputs[kCosCache].tensor.data;
      args.sin_cache = inputs[kSinCache].tensor.data;
    }
    args.output = out.data;
    args.present_key = present_key.data;
    args.present_value = present_value.data;
    LaunchGroupQueryAttention(args, stream());
  }
  bool CaptureSafe() const override { return true; }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw sdk::Error(NXRT_STATUS_UNSUPPORTED, name_ + ": " + what);
  }

  // Whether the declared present length is the past's, static or symbolic.
  static bool SameLength(const nxrt_value_info& past, const nxrt_value_info& present,
                         int64_t past_length) {
    if (past.rank != 4 || present.rank != 4) return false;
    const nxrt_dim& from = past.dims[2];
    const nxrt_dim& to = present.dims[2];
    if (to.value >= 0) return to.value == past_length;
    return from.symbol != nullptr && to.symbol != nullptr &&
           std::string_view(from.symbol) == to.symbol;
  }

  std::string name_;
  GqaArgs args_;
  bool fixed_capacity_ = false;
};

}  // namespace

std::unique_ptr<sdk::Kernel> MakeAttentionKernel(const DeviceContext& context,
                                                 const sdk::Node& node,
                                                 std::span<const nxrt_shape> inputs, int64_t) {
  if (node.domain() == "com.microsoft" && node.op_type() == "GroupQueryAttention") {
    return std::make_unique<GroupQueryAttentionKernel>(context, node, inputs);
  }
  return nullptr;
}

}  // namespace nxrt::cuda
