// RotaryEmbedding of the default domain (opset 23: X, cos_cache, sin_cache,
// optional position_ids) and of com.microsoft (input, position_ids as
// [batch, seq] or one offset, cos_cache, sin_cache), with the CPU EP's
// geometry rules: X is [batch, seq, heads * head_size] or [batch, heads, seq,
// head_size], and the first rotary_dim elements of every head are rotated.
// Everything is decided from the shapes at creation; compute only launches.
#include <algorithm>
#include <string>

#include "kernels/cuda_kernel.hpp"
#include "kernels/kernel_factory.hpp"
#include "kernels/rotary_launch.hpp"

namespace nxrt::cuda {
namespace {

bool Given(std::span<const nxrt_shape> shapes, size_t index) {
  return index < shapes.size() && shapes[index].dtype != NXRT_DTYPE_UNDEFINED;
}

int64_t CountOf(const nxrt_shape& shape) {
  int64_t n = 1;
  for (size_t d = 0; d < shape.rank; ++d) n *= shape.dims[d];
  return n;
}

class RotaryEmbeddingKernel : public CudaKernel {
 public:
  RotaryEmbeddingKernel(const DeviceContext& context, const sdk::Node& node,
                        std::span<const nxrt_shape> shapes)
      : CudaKernel(context),
        name_(std::string(node.op_type()) + " '" + std::string(node.name()) + "'"),
        contrib_(node.domain() == "com.microsoft"),
        cos_index_(contrib_ ? 2 : 1),
        position_index_(contrib_ ? 1 : 3) {
    if (shapes.size() <= cos_index_ + 1) Fail("needs cos_cache and sin_cache");
    const nxrt_shape& x = shapes[0];
    const nxrt_shape& cos = shapes[cos_index_];
    const nxrt_shape& sin = shapes[cos_index_ + 1];
    if (x.rank != 3 && x.rank != 4) Fail("input must be rank 3 or rank 4");
    if (cos.rank == 0 || cos.rank != sin.rank ||
        !std::equal(cos.dims, cos.dims + cos.rank, sin.dims)) {
      Fail("cos_cache and sin_cache must have the same non-scalar shape");
    }
    const int64_t half = cos.dims[cos.rank - 1];
    args_.dtype = x.dtype;
    args_.interleaved = node.AttrInt("interleaved", 0) == 1;
    args_.heads_first = x.rank == 4;
    args_.batch = x.dims[0];
    if (args_.heads_first) {
      args_.heads = x.dims[1];
      args_.seq = x.dims[2];
      args_.head_size = x.dims[3];
    } else {
      args_.seq = x.dims[1];
      args_.heads = node.AttrInt("num_heads", 0);
      // As on the CPU EP, com.microsoft derives the head count from a cache
      // that spans the whole head.
      if (args_.heads <= 0 && contrib_ && half > 0) args_.heads = x.dims[2] / (2 * half);
      if (args_.heads <= 0 || x.dims[2] % args_.heads != 0) {
        Fail("rank-3 input needs num_heads dividing its hidden size " + std::to_string(x.dims[2]));
      }
      args_.head_size = x.dims[2] / args_.heads;
    }
    const int64_t rotary_attr = node.AttrInt("rotary_embedding_dim", 0);
    args_.rotary_dim = contrib_ ? 2 * half : (rotary_attr > 0 ? rotary_attr : args_.head_size);
    if (args_.rotary_dim % 2 != 0 || args_.rotary_dim > args_.head_size ||
        2 * half != args_.rotary_dim) {
      Fail("cos_cache's last dimension " + std::to_string(half) +
           " must be half the rotary dimension " + std::to_string(args_.rotary_dim) +
           ", at most head size " + std::to_string(args_.head_size));
    }
    has_positions_ = Given(shapes, position_index_);
    if (!has_positions_) {
      if (contrib_) Fail("position_ids is required");
      if (cos.rank != 3 || cos.dims[0] != args_.batch || cos.dims[1] != args_.seq) {
        Fail("without position_ids, cos_cache must be [batch, sequence, rotary_dim / 2]");
      }
      args_.cache_rows = args_.batch * args_.seq;
      return;
    }
    if (cos.rank != 2) Fail("cos_cache must be [max_position, rotary_dim / 2]");
    args_.cache_rows = cos.dims[0];
    const int64_t positions = CountOf(shapes[position_index_]);
    args_.single_offset = contrib_ && positions == 1;
    if (!args_.single_offset && positions != args_.batch * args_.seq) {
      Fail("position_ids must be [batch, sequence]" +
           std::string(contrib_ ? " or one offset" : ""));
    }
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    RotaryArgs args = args_;
    if (has_positions_) {
      const nxrt_value& positions = inputs[position_index_];
      if (positions.kind != NXRT_VALUE_TENSOR || positions.tensor.memory != NXRT_MEMORY_DEVICE) {
        Fail(
            "position_ids is absent or in host memory; the CUDA kernel reads positions on "
            "the device, so place the node on the CPU EP");
      }
      args.position_ids = static_cast<const int64_t*>(positions.tensor.data);
    }
    const nxrt_tensor& x = inputs[0].tensor;
    nxrt_tensor& out = Output(ctx, outputs, 0, x.dtype, DimsOf(x));
    args.input = x.data;
    args.cos_cache = inputs[cos_index_].tensor.data;
    args.sin_cache = inputs[cos_index_ + 1].tensor.data;
    args.output = out.data;
    LaunchRotaryEmbedding(args, stream());
  }
  bool CaptureSafe() const override { return true; }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw sdk::Error(NXRT_STATUS_UNSUPPORTED, name_ + ": " + what);
  }

  std::string name_;
  bool contrib_;
  size_t cos_index_;
  size_t position_index_;
  bool has_positions_ = false;
  RotaryArgs args_;
};

}  // namespace

std::unique_ptr<sdk::Kernel> MakeRotaryKernel(const DeviceContext& context, const sdk::Node& node,
                                              std::span<const nxrt_shape> inputs, int64_t) {
  if (node.op_type() == "RotaryEmbedding") {
    return std::make_unique<RotaryEmbeddingKernel>(context, node, inputs);
  }
  return nullptr;
}

}  // namespace nxrt::cuda
