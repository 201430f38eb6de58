#include "mock_ops.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

namespace nxrt::mock {
namespace {

using nxrt::sdk::Error;
using Dims = std::vector<int64_t>;

Dims DimsOf(const nxrt_tensor& t) {
  return t.rank == 0 ? Dims() : Dims(t.dims, t.dims + t.rank);
}

int64_t ElementCount(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

const nxrt_tensor& TensorInput(std::span<const nxrt_value> inputs, size_t index,
                               const std::string& op) {
  if (index >= inputs.size() || inputs[index].kind != NXRT_VALUE_TENSOR) {
    throw Error(NXRT_STATUS_INVALID_ARGUMENT,
                "mock " + op + ": input " + std::to_string(index) + " must be a tensor");
  }
  return inputs[index].tensor;
}

// Output `index` with the given dtype and shape: the host's buffer when it
// preallocated one of that shape, else a buffer allocated now.
nxrt_tensor& PrepareOutput(nxrt::sdk::ComputeContext& ctx, std::span<nxrt_value> outputs,
                           size_t index, nxrt_dtype dtype, const Dims& dims,
                           const std::string& op) {
  if (index >= outputs.size()) {
    throw Error(NXRT_STATUS_INVALID_ARGUMENT,
                "mock " + op + ": output " + std::to_string(index) + " is missing");
  }
  nxrt_value& out = outputs[index];
  if (out.kind == NXRT_VALUE_TENSOR && out.tensor.data != nullptr) {
    if (DimsOf(out.tensor) != dims) {
      throw Error(NXRT_STATUS_INVALID_ARGUMENT, "mock " + op + ": the host preallocated output " +
                                                    std::to_string(index) + " with another shape");
    }
    return out.tensor;
  }
  if (ElementCount(dims) == 0) {
    out.kind = NXRT_VALUE_TENSOR;
    out.tensor.dtype = dtype;
    return out.tensor;
  }
  out.kind = NXRT_VALUE_TENSOR;
  out.tensor = ctx.AllocateOutput(index, dtype, dims);
  return out.tensor;
}

Dims BroadcastDims(const Dims& a, const Dims& b, const std::string& op) {
  const size_t rank = std::max(a.size(), b.size());
  Dims out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw Error(NXRT_STATUS_INVALID_ARGUMENT, "mock " + op + ": shapes do not broadcast");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Element strides of `dims` seen at `rank` dims, 0 along broadcast axes.
Dims BroadcastStrides(const Dims& dims, const Dims& out_dims) {
  const size_t rank = out_dims.size();
  Dims strides(rank, 0);
  int64_t stride = 1;
  for (size_t k = 0; k < dims.size(); ++k) {
    const size_t axis = dims.size() - 1 - k;
    const size_t out_axis = rank - 1 - k;
    strides[out_axis] = dims[axis] == 1 ? 0 : stride;
    stride *= dims[axis];
  }
  return strides;
}

void Binary(const std::string& op, const std::function<float(float, float)>& fn,
            nxrt::sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
            std::span<nxrt_value> outputs) {
  const nxrt_tensor& a = TensorInput(inputs, 0, op);
  const nxrt_tensor& b = TensorInput(inputs, 1, op);
  if (a.dtype != NXRT_DTYPE_FLOAT32 || b.dtype != NXRT_DTYPE_FLOAT32) {
    throw Error(NXRT_STATUS_UNSUPPORTED, "mock " + op + " computes float32 only");
  }
  const Dims a_dims = DimsOf(a);
  const Dims b_dims = DimsOf(b);
  const Dims out_dims = BroadcastDims(a_dims, b_dims, op);
  nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_FLOAT32, out_dims, op);
  const int64_t count = ElementCount(out_dims);
  if (count == 0) return;
  const Dims a_strides = BroadcastStrides(a_dims, out_dims);
  const Dims b_strides = BroadcastStrides(b_dims, out_dims);
  const auto* pa = static_cast<const float*>(a.data);
  const auto* pb = static_cast<const float*>(b.data);
  auto* po = static_cast<float*>(out.data);
  Dims index(out_dims.size(), 0);
  int64_t offset_a = 0;
  int64_t offset_b = 0;
  for (int64_t i = 0; i < count; ++i) {
    po[i] = fn(pa[offset_a], pb[offset_b]);
    for (size_t axis = out_dims.size(); axis-- > 0;) {
      ++index[axis];
      offset_a += a_strides[axis];
      offset_b += b_strides[axis];
      if (index[axis] < out_dims[axis]) break;
      offset_a -= a_strides[axis] * index[axis];
      offset_b -= b_strides[axis] * index[axis];
      index[axis] = 0;
    }
  }
}

void Unary(const std::string& op, const std::function<float(float)>& fn,
           nxrt::sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
           std::span<nxrt_value> outputs) {
  const nxrt_tensor& x = TensorInput(inputs, 0, op);
  if (x.dtype != NXRT_DTYPE_FLOAT32) {
    throw Error(NXRT_STATUS_UNSUPPORTED, "mock " + op + " computes float32 only");
  }
  const Dims dims = DimsOf(x);
  nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_FLOAT32, dims, op);
  const auto* px = static_cast<const float*>(x.data);
  auto* po = static_cast<float*>(out.data);
  const int64_t count = ElementCount(dims);
  for (int64_t i = 0; i < count; ++i) po[i] = fn(px[i]);
}

void Identity(nxrt::sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
              std::span<nxrt_value> outputs) {
  const nxrt_tensor& x = TensorInput(inputs, 0, "Identity");
  const Dims dims = DimsOf(x);
  if (x.dtype == NXRT_DTYPE_STRING) {
    const auto* strings = static_cast<const nxrt_string_view*>(x.data);
    PrepareOutput(ctx, outputs, 0, x.dtype, dims, "Identity");
    for (int64_t i = 0; i < ElementCount(dims); ++i) {
      ctx.SetStringElement(0, static_cast<size_t>(i), {strings[i].data, strings[i].size});
    }
    return;
  }
  nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, x.dtype, dims, "Identity");
  // The host may hand a view its input's own bytes.
  if (x.byte_size != 0 && out.data != x.data) {
    std::memcpy(out.data, x.data, std::min(x.byte_size, out.byte_size));
  }
}

// A stand-in for an attention op's cache update that a test can check: each
// present output (1, 2), float32, holds its past input (3, 4; float32 or
// float64) plus one along the leading positions of the sequence axis and
// zeros after them, as a grown cache would; output 0 is zeros. Every element
// is read before it is written, so a present output may be its past input's
// own buffer, as with a fixed-capacity cache.
void KvStep(const std::string& op, nxrt::sdk::ComputeContext& ctx,
            std::span<const nxrt_value> inputs, std::span<nxrt_value> outputs) {
  const nxrt_tensor& query = TensorInput(inputs, 0, op);
  nxrt_tensor& attended = PrepareOutput(ctx, outputs, 0, query.dtype, DimsOf(query), op);
  if (attended.data != nullptr) std::memset(attended.data, 0, attended.byte_size);
  for (size_t k = 0; k < 2 && 1 + k < outputs.size(); ++k) {
    nxrt_value& out = outputs[1 + k];
    if (out.kind != NXRT_VALUE_TENSOR) continue;
    const nxrt_tensor& past = TensorInput(inputs, 3 + k, op);
    const Dims past_dims = DimsOf(past);
    if (past_dims.size() != 4 ||
        (past.dtype != NXRT_DTYPE_FLOAT32 && past.dtype != NXRT_DTYPE_FLOAT64)) {
      throw Error(NXRT_STATUS_UNSUPPORTED, "mock " + op + ": past input " + std::to_string(3 + k) +
                                               " must be a rank-4 float32 or float64 tensor");
    }
    if (out.tensor.data == nullptr) {
      out.tensor = ctx.AllocateOutput(1 + k, NXRT_DTYPE_FLOAT32, past_dims);
    }
    const Dims present_dims = DimsOf(out.tensor);
    if (out.tensor.dtype != NXRT_DTYPE_FLOAT32 || present_dims.size() != 4 ||
        present_dims[0] != past_dims[0] || present_dims[1] != past_dims[1] ||
        present_dims[3] != past_dims[3]) {
      throw Error(NXRT_STATUS_UNSUPPORTED, "mock " + op + ": present output " +
                                               std::to_string(1 + k) +
                                               " must be float32 laid out like its past input");
    }
    const auto past_at = [&](int64_t i) -> float {
      return past.dtype == NXRT_DTYPE_FLOAT32
                 ? static_cast<const float*>(past.data)[i]
                 : static_cast<float>(static_cast<const double*>(past.data)[i]);
    };
    auto* present = static_cast<float*>(out.tensor.data);
    const int64_t blocks = past_dims[0] * past_dims[1];
    const int64_t width = past_dims[3];
    for (int64_t b = 0; b < blocks; ++b) {
      for (int64_t s = 0; s < present_dims[2]; ++s) {
        for (int64_t d = 0; d < width; ++d) {
          const int64_t to = (b * present_dims[2] + s) * width + d;
          present[to] =
              s < past_dims[2] ? past_at((b * past_dims[2] + s) * width + d) + 1.0f : 0.0f;
        }
      }
    }
  }
}

// Zeros in every output: the preallocated ones as they are, the others at
// the shape of the first tensor input.
void Zeros(const std::string& op, nxrt::sdk::ComputeContext& ctx,
           std::span<const nxrt_value> inputs, std::span<nxrt_value> outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    nxrt_value& out = outputs[i];
    if (out.kind == NXRT_VALUE_TENSOR && out.tensor.data != nullptr) {
      std::memset(out.tensor.data, 0, out.tensor.byte_size);
      continue;
    }
    if (inputs.empty() || inputs[0].kind != NXRT_VALUE_TENSOR) {
      throw Error(NXRT_STATUS_UNSUPPORTED,
                  "mock " + op + ": cannot tell the shape of output " + std::to_string(i));
    }
    const nxrt_tensor& like = inputs[0].tensor;
    if (like.dtype == NXRT_DTYPE_STRING || nxrt::sdk::ElementSize(like.dtype) == 0) {
      throw Error(NXRT_STATUS_UNSUPPORTED, "mock " + op + ": cannot zero this dtype");
    }
    nxrt_tensor& t = PrepareOutput(ctx, outputs, i, like.dtype, DimsOf(like), op);
    if (t.data != nullptr) std::memset(t.data, 0, t.byte_size);
  }
}

}  // namespace

void RunMockOp(const std::string& op, nxrt::sdk::ComputeContext& ctx,
               std::span<const nxrt_value> inputs, std::span<nxrt_value> outputs) {
  if (op == "Identity") return Identity(ctx, inputs, outputs);
  if (op == "Add") return Binary(op, std::plus<float>(), ctx, inputs, outputs);
  if (op == "Sub") return Binary(op, std::minus<float>(), ctx, inputs, outputs);
  if (op == "Mul") return Binary(op, std::multiplies<float>(), ctx, inputs, outputs);
  if (op == "Div") return Binary(op, std::divides<float>(), ctx, inputs, outputs);
  if (op == "Neg") return Unary(op, std::negate<float>(), ctx, inputs, outputs);
  if (op == "GroupQueryAttention") return KvStep(op, ctx, inputs, outputs);
  if (op == "Relu") {
    return Unary(
        op, [](float x) { return x > 0.0f ? x : 0.0f; }, ctx, inputs, outputs);
  }
  Zeros(op, ctx, inputs, outputs);
}

}  // namespace nxrt::mock
