#include "owned_value.hpp"

#include <cstring>
#include <utility>

#include "dtype.hpp"

namespace nxrt::cpu {

std::vector<nxrt_value> EmptyValues(size_t count) {
  std::vector<nxrt_value> values(count);
  for (nxrt_value& v : values) {
    v.struct_size = sizeof(nxrt_value);
    v.kind = NXRT_VALUE_NONE;
    v.tensor.struct_size = sizeof(nxrt_tensor);
  }
  return values;
}

nxrt_value TensorValue(const nxrt_tensor& t) {
  nxrt_value v = EmptyValues(1).front();
  v.kind = NXRT_VALUE_TENSOR;
  v.tensor = t;
  return v;
}

OwnedTensor::OwnedTensor(const nxrt_tensor& from) : dtype_(from.dtype), dims_(DimsOf(from)) {
  if (dtype_ == NXRT_DTYPE_STRING) {
    const auto* views = DataAs<nxrt_string_view>(from);
    const int64_t count = ElementCount(dims_);
    for (int64_t i = 0; i < count; ++i) strings_.emplace_back(views[i].data, views[i].size);
    Relink();
    return;
  }
  const auto* data = static_cast<const std::byte*>(from.data);
  bytes_.assign(data, data + from.byte_size);
}

OwnedTensor::OwnedTensor(nxrt_dtype dtype, Dims dims) : dtype_(dtype), dims_(std::move(dims)) {
  const int64_t count = ElementCount(dims_);
  if (dtype_ == NXRT_DTYPE_STRING) {
    strings_.resize(count);
    Relink();
    return;
  }
  bytes_.assign(ElementSize(dtype_) * static_cast<size_t>(count), std::byte{0});
}

OwnedTensor::OwnedTensor(const OwnedTensor& other)
    : dtype_(other.dtype_), dims_(other.dims_), bytes_(other.bytes_), strings_(other.strings_) {
  Relink();
}

OwnedTensor& OwnedTensor::operator=(const OwnedTensor& other) {
  if (this == &other) return *this;
  dtype_ = other.dtype_;
  dims_ = other.dims_;
  bytes_ = other.bytes_;
  strings_ = other.strings_;
  Relink();
  return *this;
}

void OwnedTensor::Relink() {
  views_.resize(strings_.size());
  for (size_t i = 0; i < strings_.size(); ++i) views_[i] = {strings_[i].data(), strings_[i].size()};
}

nxrt_tensor OwnedTensor::View() const {
  nxrt_tensor t{};
  t.struct_size = sizeof(t);
  t.dtype = dtype_;
  t.memory = NXRT_MEMORY_HOST;
  t.rank = dims_.size();
  t.dims = dims_.empty() ? nullptr : dims_.data();
  if (dtype_ == NXRT_DTYPE_STRING) {
    t.data = views_.empty() ? nullptr : const_cast<nxrt_string_view*>(views_.data());
    t.byte_size = views_.size() * sizeof(nxrt_string_view);
  } else {
    t.data = bytes_.empty() ? nullptr : const_cast<std::byte*>(bytes_.data());
    t.byte_size = bytes_.size();
  }
  return t;
}

OwnedValue::OwnedValue(const nxrt_value& from) : kind_(from.kind) {
  if (from.kind == NXRT_VALUE_TENSOR) tensors_.emplace_back(from.tensor);
  if (from.kind == NXRT_VALUE_SEQUENCE) {
    for (const nxrt_tensor& e : ElementsOf(from)) tensors_.emplace_back(e);
  }
}

OwnedValue OwnedValue::Tensor(OwnedTensor tensor) {
  OwnedValue v;
  v.kind_ = NXRT_VALUE_TENSOR;
  v.tensors_.push_back(std::move(tensor));
  return v;
}

nxrt_value OwnedValue::View() {
  nxrt_value v{};
  v.struct_size = sizeof(v);
  v.kind = kind_;
  v.tensor.struct_size = sizeof(nxrt_tensor);
  if (kind_ == NXRT_VALUE_TENSOR) v.tensor = tensors_.front().View();
  if (kind_ == NXRT_VALUE_SEQUENCE) {
    element_views_.clear();
    for (const OwnedTensor& t : tensors_) element_views_.push_back(t.View());
    v.sequence = element_views_.data();
    v.sequence_length = element_views_.size();
  }
  return v;
}

void WriteSequence(sdk::ComputeContext& ctx, std::span<nxrt_value> outputs, size_t index,
                   std::span<const nxrt_tensor> elements) {
  ctx.AllocateSequenceOutput(index, elements.size());
  for (size_t i = 0; i < elements.size(); ++i) {
    const nxrt_tensor& in = elements[i];
    if (in.dtype == NXRT_DTYPE_STRING) FailUnsupported("sequences of strings are not supported");
    nxrt_tensor out = ctx.AllocateSequenceElement(index, i, in.dtype, DimsSpan(in));
    if (in.byte_size > 0) std::memcpy(out.data, in.data, in.byte_size);
  }
  outputs[index].kind = NXRT_VALUE_SEQUENCE;
}

void WriteValue(sdk::ComputeContext& ctx, std::span<nxrt_value> outputs, size_t index,
                const nxrt_value& value) {
  switch (value.kind) {
    case NXRT_VALUE_TENSOR:
      WriteCopy(ctx, outputs, index, value.tensor, DimsSpan(value.tensor));
      return;
    case NXRT_VALUE_SEQUENCE:
      WriteSequence(ctx, outputs, index, ElementsOf(value));
      return;
    case NXRT_VALUE_NONE:
      ctx.SetOutputNone(index);
      outputs[index].kind = NXRT_VALUE_NONE;
      return;
  }
}

}  // namespace nxrt::cpu
