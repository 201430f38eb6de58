#include "tensor.hpp"

#include <algorithm>
#include <cstring>

namespace nxrt::cpu {

void FailInvalid(const std::string& message) {
  throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT, message);
}

void FailUnsupported(const std::string& message) {
  throw sdk::Error(NXRT_STATUS_UNSUPPORTED, message);
}

int64_t ElementCount(std::span<const int64_t> dims) {
  // An empty axis empties the tensor, however large the other extents.
  bool empty = false;
  for (int64_t d : dims) {
    if (d < 0) FailInvalid("negative dimension " + std::to_string(d));
    empty = empty || d == 0;
  }
  if (empty) return 0;
  int64_t count = 1;
  for (int64_t d : dims) {
    if (__builtin_mul_overflow(count, d, &count)) {
      FailInvalid("the element count of " + DimsText(dims) +
                  " overflows int64; fix the shape the node is given");
    }
  }
  return count;
}

std::string DimsText(std::span<const int64_t> dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  return text + "]";
}

std::vector<int64_t> ReadInt64s(const nxrt_tensor& t) {
  const int64_t count = ElementCount(t);
  std::vector<int64_t> values(static_cast<size_t>(count));
  if (t.dtype == NXRT_DTYPE_INT64) {
    std::copy_n(DataAs<int64_t>(t), count, values.begin());
  } else if (t.dtype == NXRT_DTYPE_INT32) {
    std::copy_n(DataAs<int32_t>(t), count, values.begin());
  } else {
    FailInvalid("expected an int32 or int64 tensor");
  }
  return values;
}

double ReadScalar(const nxrt_tensor& t) {
  if (ElementCount(t) < 1) FailInvalid("expected a one-element tensor, got an empty one");
  switch (t.dtype) {
    case NXRT_DTYPE_FLOAT32:
      return *DataAs<float>(t);
    case NXRT_DTYPE_FLOAT64:
      return *DataAs<double>(t);
    case NXRT_DTYPE_INT8:
      return *DataAs<int8_t>(t);
    case NXRT_DTYPE_INT16:
      return *DataAs<int16_t>(t);
    case NXRT_DTYPE_INT32:
      return *DataAs<int32_t>(t);
    case NXRT_DTYPE_INT64:
      return static_cast<double>(*DataAs<int64_t>(t));
    case NXRT_DTYPE_UINT8:
      return *DataAs<uint8_t>(t);
    case NXRT_DTYPE_UINT16:
      return *DataAs<uint16_t>(t);
    case NXRT_DTYPE_UINT32:
      return *DataAs<uint32_t>(t);
    case NXRT_DTYPE_UINT64:
      return static_cast<double>(*DataAs<uint64_t>(t));
    case NXRT_DTYPE_BOOL:
      return *DataAs<bool>(t) ? 1.0 : 0.0;
    default:
      FailInvalid("expected a numeric scalar");
  }
}

int64_t NormalizeAxis(int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= rank) {
    FailInvalid(what + ": axis " + std::to_string(axis) + " out of range for rank " +
                std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

nxrt_dtype AttrDtype(const sdk::Node& node, const char* name, int64_t fallback) {
  const int64_t value = node.AttrInt(name, fallback);
  if (value < NXRT_DTYPE_UNDEFINED || value > NXRT_DTYPE_INT2) {
    FailInvalid(std::string(node.op_type()) + ": attribute " + name + " is " +
                std::to_string(value) + ", which names no ONNX element type");
  }
  return static_cast<nxrt_dtype>(value);
}

nxrt_tensor& AllocateOrCheckOutput(sdk::ComputeContext& ctx, std::span<nxrt_value> outputs,
                                   size_t index, nxrt_dtype dtype, std::span<const int64_t> dims) {
  if (index >= outputs.size()) FailInvalid("output " + std::to_string(index) + " is missing");
  nxrt_value& value = outputs[index];
  if (value.kind == NXRT_VALUE_TENSOR && value.tensor.data != nullptr) {
    if (value.tensor.dtype != dtype || !DimsEqual(DimsSpan(value.tensor), dims)) {
      FailInvalid("output " + std::to_string(index) + " was preallocated as " +
                  sdk::DtypeName(value.tensor.dtype) + " " + DimsText(DimsSpan(value.tensor)) +
                  " but the op produces " + sdk::DtypeName(dtype) + " " + DimsText(dims) +
                  "; make the model's declared output type match what the op gives");
    }
    return value.tensor;
  }
  value.kind = NXRT_VALUE_TENSOR;
  value.tensor = ctx.AllocateOutput(index, dtype, dims);
  return value.tensor;
}

Dims StridesOf(std::span<const int64_t> dims) {
  Dims strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

}  // namespace nxrt::cpu

namespace nxrt::cpu {

void WriteCopy(sdk::ComputeContext& ctx, std::span<nxrt_value> outputs, size_t index,
               const nxrt_tensor& in, std::span<const int64_t> dims) {
  nxrt_tensor& out = PrepareOutput(ctx, outputs, index, in.dtype, dims);
  const int64_t count = ElementCount(in);
  if (in.dtype == NXRT_DTYPE_STRING) {
    const auto* strings = DataAs<nxrt_string_view>(in);
    for (int64_t i = 0; i < count; ++i) {
      ctx.SetStringElement(index, i, std::string_view(strings[i].data, strings[i].size));
    }
    return;
  }
  if (out.data != in.data && in.byte_size > 0) std::memcpy(out.data, in.data, in.byte_size);
}

}  // namespace nxrt::cpu
