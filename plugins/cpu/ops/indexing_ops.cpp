// Ops that address elements by index: Gather, GatherElements, GatherND,
// ScatterElements (and the older Scatter), ScatterND, Compress, NonZero,
// OneHot, TopK, CumSum, CumProd, Trilu, Unique and TensorScatter. Index inputs may be int32 or
// int64 and negative (counted from the end); an index out of range is an error, never a read
// outside the tensor.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "cpu_kernel.hpp"

namespace nxrt::cpu {
namespace {

int64_t CheckedIndex(int64_t index, int64_t extent, const char* op) {
  if (index < -extent || index >= extent) {
    FailInvalid(std::string(op) + ": index " + std::to_string(index) + " out of range [" +
                std::to_string(-extent) + ", " + std::to_string(extent) + ")");
  }
  return index < 0 ? index + extent : index;
}

const std::byte* Bytes(const nxrt_tensor& t) {
  return static_cast<const std::byte*>(t.data);
}
std::byte* MutableBytes(nxrt_tensor& t) {
  return static_cast<std::byte*>(t.data);
}

// The first value of an int32 or int64 tensor (an axis or a diagonal), read
// in place so compute allocates nothing.
int64_t FirstInt64(const nxrt_tensor& t, const char* op) {
  if (ElementCount(t) < 1) FailInvalid(std::string(op) + ": expected a one-element int tensor");
  if (t.dtype == NXRT_DTYPE_INT32) return *DataAs<int32_t>(t);
  if (t.dtype == NXRT_DTYPE_INT64) return *DataAs<int64_t>(t);
  FailInvalid(std::string(op) + ": expected an int32 or int64 tensor");
}

// A kernel whose whole compute is one function of the node's attributes;
// capture-safe when that function allocates nothing given preallocated
// outputs and its output dims follow from the input dims alone.
class IndexKernel : public CpuKernel {
 public:
  using Body =
      std::function<void(sdk::ComputeContext&, std::span<const nxrt_value>, std::span<nxrt_value>)>;
  IndexKernel(Body body, bool capture_safe) : CpuKernel(capture_safe), body_(std::move(body)) {}
  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    body_(ctx, inputs, outputs);
  }

 private:
  Body body_;
};

// Gather's output dims follow from the input dims alone, so they are worked
// out when the kernel is made, and again for a call at other shapes (one
// kernel serves every shape of the node's ranks); compute at repeated shapes
// allocates nothing: capture-safe.
class GatherKernel : public CpuKernel {
 public:
  GatherKernel(int64_t axis_attr, std::span<const nxrt_shape> inputs)
      : CpuKernel(true), axis_attr_(axis_attr) {
    Configure(std::span(inputs[0].dims, inputs[0].rank), std::span(inputs[1].dims, inputs[1].rank));
  }
  bool ServesOtherShapes() const override { return true; }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& data = inputs[0].tensor;
    const nxrt_tensor& indices = inputs[1].tensor;
    if (!DimsEqual(DimsSpan(data), data_dims_) || !DimsEqual(DimsSpan(indices), index_dims_)) {
      Configure(DimsSpan(data), DimsSpan(indices));
    }
    nxrt_tensor& y = PrepareOutput(ctx, outputs, 0, data.dtype, out_dims_);
    const size_t block = static_cast<size_t>(inner_) * ElementSize(data.dtype);
    Dispatch(IndexTypes{}, indices.dtype, "Gather", [&](auto tag) {
      const auto* index = DataAs<typename decltype(tag)::type>(indices);
      for (int64_t o = 0; o < outer_; ++o) {
        for (int64_t j = 0; j < count_; ++j) {
          const int64_t at = CheckedIndex(static_cast<int64_t>(index[j]), extent_, "Gather");
          // Rows of no elements have no memory (a null pointer) to copy from.
          if (block == 0) continue;
          std::memcpy(MutableBytes(y) + (o * count_ + j) * block,
                      Bytes(data) + (o * extent_ + at) * block, block);
        }
      }
    });
  }

 private:
  void Configure(std::span<const int64_t> data, std::span<const int64_t> indices) {
    data_dims_.clear();  // matches no data until the gather is worked out
    const int64_t axis = NormalizeAxis(axis_attr_, static_cast<int64_t>(data.size()), "Gather");
    out_dims_.assign(data.begin(), data.begin() + axis);
    out_dims_.insert(out_dims_.end(), indices.begin(), indices.end());
    out_dims_.insert(out_dims_.end(), data.begin() + axis + 1, data.end());
    outer_ = ElementCount(data.first(static_cast<size_t>(axis)));
    inner_ = ElementCount(data.subspan(static_cast<size_t>(axis) + 1));
    extent_ = data[static_cast<size_t>(axis)];
    count_ = ElementCount(indices);
    index_dims_.assign(indices.begin(), indices.end());
    data_dims_.assign(data.begin(), data.end());
  }

  int64_t axis_attr_;
  Dims data_dims_;
  Dims index_dims_;
  Dims out_dims_;
  int64_t outer_ = 1;
  int64_t inner_ = 1;
  int64_t extent_ = 0;
  int64_t count_ = 0;
};

// Visits every element of `index_dims` with its flat position and the flat
// position it addresses in `dims` when its coordinate on `axis` is replaced
// by the index value.
template <typename Visit>
void WalkAlongAxis(const Dims& dims, const Dims& index_dims, int64_t axis,
                   const std::vector<int64_t>& indices, const char* op, Visit&& visit) {
  const Dims strides = StridesOf(dims);
  const int64_t rank = static_cast<int64_t>(index_dims.size());
  if (index_dims.size() != dims.size()) {
    FailInvalid(std::string(op) + ": indices have rank " + std::to_string(rank) +
                " and data rank " + std::to_string(dims.size()) + "; give them the same rank");
  }
  for (int64_t a = 0; a < rank; ++a) {
    if (a != axis && index_dims[a] > dims[a]) {
      FailInvalid(std::string(op) + ": indices extend " + std::to_string(index_dims[a]) +
                  " along axis " + std::to_string(a) + ", past the data's " +
                  std::to_string(dims[a]) + "; only the axis being indexed may differ");
    }
  }
  std::vector<int64_t> coord(rank, 0);
  for (size_t i = 0; i < indices.size(); ++i) {
    int64_t offset = 0;
    for (int64_t a = 0; a < rank; ++a) {
      const int64_t c = a == axis ? CheckedIndex(indices[i], dims[a], op) : coord[a];
      offset += c * strides[a];
    }
    visit(static_cast<int64_t>(i), offset);
    for (int64_t a = rank; a-- > 0;) {
      if (++coord[a] < index_dims[a]) break;
      coord[a] = 0;
    }
  }
}

enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

ScatterReduction ParseReduction(const std::string& text) {
  if (text == "add") return ScatterReduction::kAdd;
  if (text == "mul") return ScatterReduction::kMul;
  if (text == "max") return ScatterReduction::kMax;
  if (text == "min") return ScatterReduction::kMin;
  return ScatterReduction::kNone;
}

// Applies one update element at `dst` with `reduction`.
void Combine(nxrt_dtype dtype, ScatterReduction reduction, std::byte* dst, const std::byte* src) {
  if (reduction == ScatterReduction::kNone) {
    std::memcpy(dst, src, ElementSize(dtype));
    return;
  }
  Dispatch(NumericTypes{}, dtype, "scatter reduction", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    T a, b;
    std::memcpy(&a, dst, sizeof(T));
    std::memcpy(&b, src, sizeof(T));
    const C x = static_cast<C>(a), z = static_cast<C>(b);
    C r = x;
    switch (reduction) {
      case ScatterReduction::kAdd:
        r = static_cast<C>(x + z);
        break;
      case ScatterReduction::kMul:
        r = static_cast<C>(x * z);
        break;
      case ScatterReduction::kMax:
        r = std::max(x, z);
        break;
      case ScatterReduction::kMin:
        r = std::min(x, z);
        break;
      default:
        break;
    }
    const T result = static_cast<T>(r);
    std::memcpy(dst, &result, sizeof(T));
  });
}

void GatherElements(int64_t axis_attr, sdk::ComputeContext& ctx, std::span<const nxrt_value> in,
                    std::span<nxrt_value> out) {
  const nxrt_tensor& data = in[0].tensor;
  const Dims dims = DimsOf(data);
  const Dims index_dims = DimsOf(in[1].tensor);
  const int64_t axis =
      NormalizeAxis(axis_attr, static_cast<int64_t>(dims.size()), "GatherElements");
  nxrt_tensor& y = PrepareOutput(ctx, out, 0, data.dtype, index_dims);
  const size_t size = ElementSize(data.dtype);
  WalkAlongAxis(dims, index_dims, axis, ReadInt64s(in[1].tensor), "GatherElements",
                [&](int64_t i, int64_t offset) {
                  std::memcpy(MutableBytes(y) + i * size, Bytes(data) + offset * size, size);
                });
}

void ScatterElements(int64_t axis_attr, ScatterReduction reduction, sdk::ComputeContext& ctx,
                     std::span<const nxrt_value> in, std::span<nxrt_value> out) {
  const nxrt_tensor& data = in[0].tensor;
  const Dims dims = DimsOf(data);
  const int64_t axis =
      NormalizeAxis(axis_attr, static_cast<int64_t>(dims.size()), "ScatterElements");
  nxrt_tensor& y = PrepareOutput(ctx, out, 0, data.dtype, dims);
  if (y.data != data.data && data.byte_size) std::memcpy(y.data, data.data, data.byte_size);
  const size_t size = ElementSize(data.dtype);
  if (DimsOf(in[2].tensor) != DimsOf(in[1].tensor) || in[2].tensor.dtype != data.dtype) {
    FailInvalid("ScatterElements: updates must have the indices' shape and the data's dtype");
  }
  WalkAlongAxis(dims, DimsOf(in[1].tensor), axis, ReadInt64s(in[1].tensor), "ScatterElements",
                [&](int64_t i, int64_t offset) {
                  Combine(data.dtype, reduction, MutableBytes(y) + offset * size,
                          Bytes(in[2].tensor) + i * size);
                });
}

// GatherND and ScatterND: the index tuples of the last indices axis address
// slices of `data` after `batch_dims` leading batch axes.
struct NdAddressing {
  int64_t batches = 1;
  int64_t tuples_per_batch = 0;
  int64_t tuple_length = 0;
  int64_t slice = 1;  // elements per addressed slice
  int64_t batch_stride = 0;
  Dims slice_strides;  // strides of the addressed axes (in elements)
  Dims addressed;      // extents of the addressed axes
};

NdAddressing Address(const Dims& dims, const Dims& index_dims, int64_t batch_dims, const char* op) {
  NdAddressing a;
  if (index_dims.empty()) FailInvalid(std::string(op) + ": indices need rank 1 or more");
  a.tuple_length = index_dims.back();
  if (batch_dims + a.tuple_length > static_cast<int64_t>(dims.size())) {
    FailInvalid(std::string(op) + ": index tuples longer than the data rank");
  }
  for (int64_t i = 0; i < batch_dims; ++i) a.batches *= dims[i];
  int64_t tuples = 1;
  for (size_t i = 0; i + 1 < index_dims.size(); ++i) tuples *= index_dims[i];
  a.tuples_per_batch = a.batches ? tuples / a.batches : 0;
  for (size_t i = batch_dims + a.tuple_length; i < dims.size(); ++i) a.slice *= dims[i];
  const Dims strides = StridesOf(dims);
  a.batch_stride = batch_dims > 0 ? strides[batch_dims - 1] : 0;
  for (int64_t i = 0; i < a.tuple_length; ++i) {
    a.slice_strides.push_back(strides[batch_dims + i]);
    a.addressed.push_back(dims[batch_dims + i]);
  }
  return a;
}

void GatherNd(int64_t batch_dims, sdk::ComputeContext& ctx, std::span<const nxrt_value> in,
              std::span<nxrt_value> out) {
  const nxrt_tensor& data = in[0].tensor;
  const Dims dims = DimsOf(data);
  const Dims index_dims = DimsOf(in[1].tensor);
  const NdAddressing a = Address(dims, index_dims, batch_dims, "GatherND");
  Dims out_dims(index_dims.begin(), index_dims.end() - 1);
  out_dims.insert(out_dims.end(), dims.begin() + batch_dims + a.tuple_length, dims.end());
  nxrt_tensor& y = PrepareOutput(ctx, out, 0, data.dtype, out_dims);
  const std::vector<int64_t> indices = ReadInt64s(in[1].tensor);
  const size_t size = ElementSize(data.dtype);
  for (int64_t b = 0; b < a.batches; ++b) {
    for (int64_t t = 0; t < a.tuples_per_batch; ++t) {
      const int64_t tuple = b * a.tuples_per_batch + t;
      int64_t offset = b * a.batch_stride;
      for (int64_t k = 0; k < a.tuple_length; ++k) {
        offset += CheckedIndex(indices[tuple * a.tuple_length + k], a.addressed[k], "GatherND") *
                  a.slice_strides[k];
      }
      std::memcpy(MutableBytes(y) + tuple * a.slice * size, Bytes(data) + offset * size,
                  a.slice * size);
    }
  }
}

void ScatterNd(ScatterReduction reduction, sdk::ComputeContext& ctx, std::span<const nxrt_value> in,
               std::span<nxrt_value> out) {
  const nxrt_tensor& data = in[0].tensor;
  const Dims dims = DimsOf(data);
  const Dims index_dims = DimsOf(in[1].tensor);
  const NdAddressing a = Address(dims, index_dims, 0, "ScatterND");
  // updates: the indices' dims but the last, then the data's past the tuple.
  Dims update_dims(index_dims.begin(), index_dims.end() - 1);
  update_dims.insert(update_dims.end(), dims.begin() + a.tuple_length, dims.end());
  const nxrt_tensor& updates = in[2].tensor;
  if (!DimsEqual(DimsSpan(updates), update_dims) || updates.dtype != data.dtype) {
    FailInvalid("ScatterND: updates are " + DimsText(DimsSpan(updates)) + "; data " +
                DimsText(dims) + " with indices " + DimsText(index_dims) + " takes updates of " +
                DimsText(update_dims) + " and the data's type");
  }
  nxrt_tensor& y = PrepareOutput(ctx, out, 0, data.dtype, dims);
  if (y.data != data.data && data.byte_size) std::memcpy(y.data, data.data, data.byte_size);
  const std::vector<int64_t> indices = ReadInt64s(in[1].tensor);
  const size_t size = ElementSize(data.dtype);
  for (int64_t t = 0; t < a.tuples_per_batch; ++t) {
    int64_t offset = 0;
    for (int64_t k = 0; k < a.tuple_length; ++k) {
      offset += CheckedIndex(indices[t * a.tuple_length + k], a.addressed[k], "ScatterND") *
                a.slice_strides[k];
    }
    for (int64_t e = 0; e < a.slice; ++e) {
      Combine(data.dtype, reduction, MutableBytes(y) + (offset + e) * size,
              Bytes(updates) + (t * a.slice + e) * size);
    }
  }
}

void Compress(std::optional<int64_t> axis_attr, sdk::ComputeContext& ctx,
              std::span<const nxrt_value> in, std::span<nxrt_value> out) {
  const nxrt_tensor& data = in[0].tensor;
  Dims dims = DimsOf(data);
  if (!axis_attr) dims = {ElementCount(dims)};
  const int64_t axis =
      axis_attr ? NormalizeAxis(*axis_attr, static_cast<int64_t>(dims.size()), "Compress") : 0;
  const bool* condition = DataAs<bool>(in[1].tensor);
  const int64_t length = std::min(ElementCount(in[1].tensor), dims[axis]);
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < length; ++i) {
    if (condition[i]) kept.push_back(i);
  }
  Dims out_dims = dims;
  out_dims[axis] = static_cast<int64_t>(kept.size());
  nxrt_tensor& y = PrepareOutput(ctx, out, 0, data.dtype, out_dims);
  const size_t size = ElementSize(data.dtype);
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= dims[i];
  int64_t inner = 1;
  for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
  const size_t block = inner * size;
  int64_t next = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k : kept) {
      std::memcpy(MutableBytes(y) + next++ * block, Bytes(data) + (o * dims[axis] + k) * block,
                  block);
    }
  }
}

void NonZero(sdk::ComputeContext& ctx, std::span<const nxrt_value> in, std::span<nxrt_value> out) {
  const nxrt_tensor& data = in[0].tensor;
  const Dims dims = DimsOf(data);
  const int64_t total = ElementCount(dims);
  std::vector<int64_t> found;
  Dispatch(AllTypes{}, data.dtype, "NonZero", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = DataAs<T>(data);
    for (int64_t i = 0; i < total; ++i) {
      if (static_cast<ComputeType<T>>(x[i]) != ComputeType<T>(0)) found.push_back(i);
    }
  });
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t count = static_cast<int64_t>(found.size());
  nxrt_tensor& y = PrepareOutput(ctx, out, 0, NXRT_DTYPE_INT64, Dims{rank, count});
  int64_t* p = MutableDataAs<int64_t>(y);
  const Dims strides = StridesOf(dims);
  for (int64_t j = 0; j < count; ++j) {
    for (int64_t a = 0; a < rank; ++a) p[a * count + j] = (found[j] / strides[a]) % dims[a];
  }
}

void OneHot(int64_t axis_attr, sdk::ComputeContext& ctx, std::span<const nxrt_value> in,
            std::span<nxrt_value> out) {
  const nxrt_tensor& indices_tensor = in[0].tensor;
  const auto depth = SaturatingCast<int64_t>(ReadScalar(in[1].tensor));
  const nxrt_tensor& values = in[2].tensor;
  if (depth < 0)
    FailInvalid("OneHot: depth is " + std::to_string(depth) + "; it must not be negative");
  if (ElementCount(values) != 2) {
    FailInvalid("OneHot: values holds " + std::to_string(ElementCount(values)) +
                " elements; it must be the pair [off_value, on_value]");
  }
  const Dims index_dims = DimsOf(indices_tensor);
  const int64_t rank = static_cast<int64_t>(index_dims.size()) + 1;
  const int64_t axis = NormalizeAxis(axis_attr, rank, "OneHot");
  Dims out_dims = index_dims;
  out_dims.insert(out_dims.begin() + axis, depth);
  nxrt_tensor& y = PrepareOutput(ctx, out, 0, values.dtype, out_dims);
  const size_t size = ElementSize(values.dtype);
  const int64_t count = ElementCount(index_dims);
  std::vector<double> indices(count);
  Dispatch(NumericTypes{}, indices_tensor.dtype, "OneHot", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = DataAs<T>(indices_tensor);
    for (int64_t i = 0; i < count; ++i) {
      indices[i] = static_cast<double>(static_cast<ComputeType<T>>(x[i]));
    }
  });
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= index_dims[i];
  const int64_t inner = outer ? count / outer : 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t d = 0; d < depth; ++d) {
      for (int64_t i = 0; i < inner; ++i) {
        auto index = static_cast<int64_t>(indices[o * inner + i]);
        if (index < 0) index += depth;
        const bool on = index == d;
        std::memcpy(MutableBytes(y) + ((o * depth + d) * inner + i) * size,
                    Bytes(values) + (on ? size : 0), size);
      }
    }
  }
}

void TopK(int64_t axis_attr, bool largest, bool sorted, int64_t k_attr, int64_t opset,
          sdk::ComputeContext& ctx, std::span<const nxrt_value> in, std::span<nxrt_value> out) {
  const nxrt_tensor& data = in[0].tensor;
  const Dims dims = DimsOf(data);
  const int64_t axis = NormalizeAxis(axis_attr, static_cast<int64_t>(dims.size()), "TopK");
  const int64_t k = opset >= 10 ? ReadInt64s(in[1].tensor).at(0) : k_attr;
  if (k < 0 || k > dims[axis]) FailInvalid("TopK: k out of range");
  Dims out_dims = dims;
  out_dims[axis] = k;
  nxrt_tensor& values = PrepareOutput(ctx, out, 0, data.dtype, out_dims);
  nxrt_tensor& indices = PrepareOutput(ctx, out, 1, NXRT_DTYPE_INT64, out_dims);
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= dims[i];
  int64_t inner = 1;
  for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
  const int64_t n = dims[axis];
  Dispatch(NumericTypes{}, data.dtype, "TopK", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T* x = DataAs<T>(data);
    T* v = MutableDataAs<T>(values);
    int64_t* idx = MutableDataAs<int64_t>(indices);
    std::vector<int64_t> order(n);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) {
        const T* row = x + o * n * inner + j;
        std::iota(order.begin(), order.end(), 0);
        auto before = [&](int64_t a, int64_t b) {
          const C va = static_cast<C>(row[a * inner]), vb = static_cast<C>(row[b * inner]);
          if (va != vb) return largest ? va > vb : va < vb;
          return a < b;
        };
        std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
        if (!sorted) std::sort(order.begin(), order.begin() + k);
        for (int64_t i = 0; i < k; ++i) {
          const int64_t at = (o * k + i) * inner + j;
          v[at] = row[order[i] * inner];
          idx[at] = order[i];
        }
      }
    }
  });
}

// CumSum and CumProd: one scan along an axis; exclusive starts from the
// operation's identity.
void Cumulative(bool product, bool exclusive, bool reverse, sdk::ComputeContext& ctx,
                std::span<const nxrt_value> in, std::span<nxrt_value> out) {
  const char* op = product ? "CumProd" : "CumSum";
  const nxrt_tensor& data = in[0].tensor;
  const std::span<const int64_t> dims = DimsSpan(data);
  const int64_t axis =
      NormalizeAxis(FirstInt64(in[1].tensor, op), static_cast<int64_t>(dims.size()), op);
  nxrt_tensor& y = PrepareOutput(ctx, out, 0, data.dtype, dims);
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= dims[i];
  int64_t inner = 1;
  for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
  const int64_t n = dims[axis];
  Dispatch(NumericTypes{}, data.dtype, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T* x = DataAs<T>(data);
    T* p = MutableDataAs<T>(y);
    auto step = [product](C acc, C v) { return static_cast<C>(product ? acc * v : acc + v); };
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) {
        C acc = product ? 1 : 0;
        for (int64_t s = 0; s < n; ++s) {
          const int64_t i = reverse ? n - 1 - s : s;
          const int64_t at = (o * n + i) * inner + j;
          const C v = static_cast<C>(x[at]);
          if (!exclusive) acc = step(acc, v);
          p[at] = static_cast<T>(acc);
          if (exclusive) acc = step(acc, v);
        }
      }
    }
  });
}

// TensorScatter: the past cache with each sample's update rows written from
// that sample's write index along `axis` (wrapping when circular).
void TensorScatter(int64_t axis_attr, bool circular, sdk::ComputeContext& ctx,
                   std::span<const nxrt_value> in, std::span<nxrt_value> out) {
  const nxrt_tensor& past = in[0].tensor;
  const nxrt_tensor& update = in[1].tensor;
  const std::span<const int64_t> dims = DimsSpan(past);
  const std::span<const int64_t> update_dims = DimsSpan(update);
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t axis = NormalizeAxis(axis_attr, rank, "TensorScatter");
  if (axis == 0 || update.dtype != past.dtype || update_dims.size() != dims.size()) {
    FailInvalid("TensorScatter: update " + DimsText(update_dims) + " does not fit cache " +
                DimsText(dims) + " along axis " + std::to_string(axis));
  }
  for (int64_t i = 0; i < rank; ++i) {
    if (i != axis && update_dims[i] != dims[i]) {
      FailInvalid("TensorScatter: update " + DimsText(update_dims) + " does not fit cache " +
                  DimsText(dims));
    }
  }
  const int64_t max_seq = dims[axis];
  const int64_t seq = update_dims[axis];
  int64_t per_batch = 1;  // prefixes per sample
  for (int64_t i = 1; i < axis; ++i) per_batch *= dims[i];
  int64_t inner = 1;
  for (int64_t i = axis + 1; i < rank; ++i) inner *= dims[i];
  const size_t row = static_cast<size_t>(inner) * ElementSize(past.dtype);
  const bool has_indices = IsPresent(in, 2);
  if (has_indices && ElementCount(in[2].tensor) != dims[0]) {
    FailInvalid("TensorScatter: " + std::to_string(ElementCount(in[2].tensor)) +
                " write indices for a batch of " + std::to_string(dims[0]) +
                "; give one per sample");
  }
  if (circular && max_seq == 0 && seq > 0) {
    FailInvalid(
        "TensorScatter: a circular cache of 0 rows has no room for an update; give it rows");
  }
  nxrt_tensor& y = PrepareOutput(ctx, out, 0, past.dtype, dims);
  std::memcpy(MutableBytes(y), Bytes(past),
              static_cast<size_t>(ElementCount(dims)) * ElementSize(past.dtype));
  for (int64_t b = 0; b < dims[0]; ++b) {
    int64_t start = 0;
    if (has_indices) {
      const nxrt_tensor& w = in[2].tensor;
      start = w.dtype == NXRT_DTYPE_INT32 ? DataAs<int32_t>(w)[b] : DataAs<int64_t>(w)[b];
    }
    if (start < 0 || (!circular && start + seq > max_seq)) {
      FailInvalid("TensorScatter: write index " + std::to_string(start) + " with " +
                  std::to_string(seq) + " rows does not fit " + std::to_string(max_seq));
    }
    for (int64_t p = b * per_batch; p < (b + 1) * per_batch; ++p) {
      for (int64_t s = 0; s < seq; ++s) {
        const int64_t at = circular ? (start + s) % max_seq : start + s;
        std::memcpy(MutableBytes(y) + static_cast<size_t>(p * max_seq + at) * row,
                    Bytes(update) + static_cast<size_t>(p * seq + s) * row, row);
      }
    }
  }
}

void Trilu(bool upper, sdk::ComputeContext& ctx, std::span<const nxrt_value> in,
           std::span<nxrt_value> out) {
  const nxrt_tensor& data = in[0].tensor;
  const std::span<const int64_t> dims = DimsSpan(data);
  if (dims.size() < 2) FailInvalid("Trilu: input needs rank 2 or more");
  const int64_t k = IsPresent(in, 1) ? FirstInt64(in[1].tensor, "Trilu") : 0;
  nxrt_tensor& y = PrepareOutput(ctx, out, 0, data.dtype, dims);
  const int64_t rows = dims[dims.size() - 2];
  const int64_t cols = dims.back();
  const int64_t matrices = rows * cols > 0 ? ElementCount(dims) / (rows * cols) : 0;
  const size_t size = ElementSize(data.dtype);
  for (int64_t m = 0; m < matrices; ++m) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const bool keep = upper ? c - r >= k : c - r <= k;
        const int64_t at = (m * rows + r) * cols + c;
        if (keep) {
          std::memcpy(MutableBytes(y) + at * size, Bytes(data) + at * size, size);
        } else {
          std::memset(MutableBytes(y) + at * size, 0, size);
        }
      }
    }
  }
}

// Unique elements (no axis: of the flattened input) or unique slices along
// `axis`, sorted ascending or in order of first occurrence, with first
// indices, inverse indices and counts.
void Unique(std::optional<int64_t> axis_attr, bool sorted, sdk::ComputeContext& ctx,
            std::span<const nxrt_value> in, std::span<nxrt_value> out) {
  const nxrt_tensor& data = in[0].tensor;
  Dims dims = DimsOf(data);
  if (!axis_attr) dims = {ElementCount(dims)};
  const int64_t axis =
      axis_attr ? NormalizeAxis(*axis_attr, static_cast<int64_t>(dims.size()), "Unique") : 0;
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= dims[i];
  int64_t inner = 1;
  for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
  const int64_t n = dims[axis];
  Dispatch(NumericTypes{}, data.dtype, "Unique", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T* x = DataAs<T>(data);
    // Slice s holds x[o][s][i] for all o, i.
    auto element = [&](int64_t slice, int64_t k) {
      return static_cast<C>(x[((k / inner) * n + slice) * inner + k % inner]);
    };
    const int64_t slice_size = outer * inner;
    auto less = [&](int64_t a, int64_t b) {
      for (int64_t k = 0; k < slice_size; ++k) {
        const C va = element(a, k), vb = element(b, k);
        if (va != vb) return va < vb;
      }
      return false;
    };
    auto equal = [&](int64_t a, int64_t b) { return !less(a, b) && !less(b, a); };
    std::vector<int64_t> firsts;  // first occurrence of each unique slice
    std::vector<int64_t> inverse(n);
    std::vector<int64_t> counts;
    for (int64_t s = 0; s < n; ++s) {
      int64_t found = -1;
      for (size_t u = 0; u < firsts.size() && found < 0; ++u) {
        if (equal(firsts[u], s)) found = static_cast<int64_t>(u);
      }
      if (found < 0) {
        found = static_cast<int64_t>(firsts.size());
        firsts.push_back(s);
        counts.push_back(0);
      }
      inverse[s] = found;
      ++counts[found];
    }
    std::vector<int64_t> order(firsts.size());
    std::iota(order.begin(), order.end(), 0);
    if (sorted) {
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return less(firsts[a], firsts[b]); });
    }
    std::vector<int64_t> rank_of(order.size());
    for (size_t r = 0; r < order.size(); ++r) rank_of[order[r]] = static_cast<int64_t>(r);
    const int64_t u = static_cast<int64_t>(order.size());
    Dims y_dims = dims;
    y_dims[axis] = u;
    T* y = MutableDataAs<T>(PrepareOutput(ctx, out, 0, data.dtype, y_dims));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t r = 0; r < u; ++r) {
        for (int64_t i = 0; i < inner; ++i) {
          y[(o * u + r) * inner + i] = x[(o * n + firsts[order[r]]) * inner + i];
        }
      }
    }
    auto write = [&](size_t index, int64_t length, auto value_of) {
      if (index >= out.size() || out[index].kind != NXRT_VALUE_TENSOR) return;
      int64_t* p =
          MutableDataAs<int64_t>(PrepareOutput(ctx, out, index, NXRT_DTYPE_INT64, Dims{length}));
      for (int64_t i = 0; i < length; ++i) p[i] = value_of(i);
    };
    write(1, u, [&](int64_t r) { return firsts[order[r]]; });
    write(2, n, [&](int64_t s) { return rank_of[inverse[s]]; });
    write(3, u, [&](int64_t r) { return counts[order[r]]; });
  });
}

ClaimFn ClaimData(auto list,
                  std::function<std::optional<std::string>(const sdk::Node&)> extra = nullptr) {
  return [list, extra](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
    if (extra) {
      if (auto reason = extra(node)) return sdk::ClaimResult::Declined(*reason);
    }
    return ClaimUnless(CheckInputDtype(node, inputs, 0, list));
  };
}

std::optional<std::string> CheckReduction(const sdk::Node& node) {
  const std::string reduction = node.AttrString("reduction", "none");
  if (reduction == "none" || reduction == "add" || reduction == "mul" || reduction == "max" ||
      reduction == "min") {
    return std::nullopt;
  }
  return std::string(node.op_type()) + ": reduction=" + reduction + " not implemented";
}

template <typename Make>
void AddIndex(OpRegistry& r, const char* name, int64_t since, ClaimFn claim, Make make,
              bool capture_safe = false) {
  r.Add(name,
        {since, std::move(claim),
         [make, capture_safe](const sdk::Node& node, std::span<const nxrt_shape>, int64_t opset) {
           return std::make_unique<IndexKernel>(make(node, opset), capture_safe);
         }});
}

using namespace std::placeholders;

}  // namespace

void RegisterIndexingOps(OpRegistry& r) {
  r.Add("Gather", {1, ClaimData(AllTypes{}),
                   [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
                     return std::make_unique<GatherKernel>(node.AttrInt("axis", 0), inputs);
                   }});
  AddIndex(r, "GatherElements", 11, ClaimData(AllTypes{}), [](const sdk::Node& node, int64_t) {
    return IndexKernel::Body(std::bind(GatherElements, node.AttrInt("axis", 0), _1, _2, _3));
  });
  AddIndex(r, "GatherND", 11, ClaimData(AllTypes{}), [](const sdk::Node& node, int64_t) {
    return IndexKernel::Body(std::bind(GatherNd, node.AttrInt("batch_dims", 0), _1, _2, _3));
  });
  auto scatter_elements = [](const sdk::Node& node, int64_t) {
    return IndexKernel::Body(std::bind(ScatterElements, node.AttrInt("axis", 0),
                                       ParseReduction(node.AttrString("reduction", "none")), _1, _2,
                                       _3));
  };
  AddIndex(r, "ScatterElements", 11, ClaimData(AllTypes{}, CheckReduction), scatter_elements);
  AddIndex(r, "Scatter", 9, ClaimData(AllTypes{}), scatter_elements);
  AddIndex(r, "ScatterND", 11, ClaimData(AllTypes{}, CheckReduction),
           [](const sdk::Node& node, int64_t) {
             return IndexKernel::Body(std::bind(
                 ScatterNd, ParseReduction(node.AttrString("reduction", "none")), _1, _2, _3));
           });
  AddIndex(r, "Compress", 9, ClaimData(AllTypes{}), [](const sdk::Node& node, int64_t) {
    std::optional<int64_t> axis;
    if (node.attr_type("axis") != NXRT_ATTR_UNDEFINED) axis = node.AttrInt("axis", 0);
    return IndexKernel::Body(std::bind(Compress, axis, _1, _2, _3));
  });
  AddIndex(r, "NonZero", 9, ClaimData(AllTypes{}),
           [](const sdk::Node&, int64_t) { return IndexKernel::Body(NonZero); });
  AddIndex(r, "OneHot", 9, ClaimData(NumericTypes{}), [](const sdk::Node& node, int64_t) {
    return IndexKernel::Body(std::bind(OneHot, node.AttrInt("axis", -1), _1, _2, _3));
  });
  AddIndex(r, "TopK", 1, ClaimData(NumericTypes{}), [](const sdk::Node& node, int64_t opset) {
    return IndexKernel::Body(
        std::bind(TopK, node.AttrInt("axis", -1), node.AttrInt("largest", 1) != 0,
                  node.AttrInt("sorted", 1) != 0, node.AttrInt("k", 0), opset, _1, _2, _3));
  });
  for (const bool product : {false, true}) {
    AddIndex(
        r, product ? "CumProd" : "CumSum", product ? 26 : 11, ClaimData(NumericTypes{}),
        [product](const sdk::Node& node, int64_t) {
          return IndexKernel::Body(std::bind(Cumulative, product, node.AttrInt("exclusive", 0) != 0,
                                             node.AttrInt("reverse", 0) != 0, _1, _2, _3));
        },
        true);
  }
  AddIndex(r, "Unique", 11, ClaimData(NumericTypes{}), [](const sdk::Node& node, int64_t) {
    std::optional<int64_t> axis;
    if (node.attr_type("axis") != NXRT_ATTR_UNDEFINED) axis = node.AttrInt("axis", 0);
    return IndexKernel::Body(std::bind(Unique, axis, node.AttrInt("sorted", 1) != 0, _1, _2, _3));
  });
  AddIndex(
      r, "TensorScatter", 24,
      ClaimData(AllTypes{},
                [](const sdk::Node& node) -> std::optional<std::string> {
                  const std::string mode = node.AttrString("mode", "linear");
                  if (mode == "linear" || mode == "circular") return std::nullopt;
                  return "TensorScatter: mode '" + mode + "' not implemented";
                }),
      [](const sdk::Node& node, int64_t) {
        return IndexKernel::Body(std::bind(TensorScatter, node.AttrInt("axis", -2),
                                           node.AttrString("mode", "linear") == "circular", _1, _2,
                                           _3));
      },
      true);
  AddIndex(
      r, "Trilu", 14, ClaimData(AllTypes{}),
      [](const sdk::Node& node, int64_t) {
        return IndexKernel::Body(std::bind(Trilu, node.AttrInt("upper", 1) != 0, _1, _2, _3));
      },
      true);
}

}  // namespace nxrt::cpu
