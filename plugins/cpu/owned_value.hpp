// Values a kernel keeps a copy of: what a body gave back (host-owned only
// until the body runs again), Loop-carried state, scan slices and sequence
// elements; and the one way a kernel hands any value (tensor, sequence or
// nothing) to one of its outputs.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "nxrt/ep_abi.h"
#include "nxrt/ep_sdk.hpp"
#include "tensor.hpp"

namespace nxrt::cpu {

class OwnedTensor {
 public:
  OwnedTensor() = default;
  explicit OwnedTensor(const nxrt_tensor& from);
  // Zero-filled (empty strings for STRING); `dtype` has a byte size.
  OwnedTensor(nxrt_dtype dtype, Dims dims);
  OwnedTensor(const OwnedTensor& other);
  OwnedTensor& operator=(const OwnedTensor& other);
  OwnedTensor(OwnedTensor&&) noexcept = default;
  OwnedTensor& operator=(OwnedTensor&&) noexcept = default;

  nxrt_dtype dtype() const { return dtype_; }
  const Dims& dims() const { return dims_; }
  std::byte* bytes() { return bytes_.data(); }
  // A view that stays valid while this tensor lives and is not moved.
  nxrt_tensor View() const;

 private:
  void Relink();
  nxrt_dtype dtype_ = NXRT_DTYPE_UNDEFINED;
  Dims dims_;
  std::vector<std::byte> bytes_;
  std::vector<std::string> strings_;
  std::vector<nxrt_string_view> views_;
};

class OwnedValue {
 public:
  OwnedValue() = default;
  explicit OwnedValue(const nxrt_value& from);
  static OwnedValue Tensor(OwnedTensor tensor);

  // A view valid while this value lives and is not changed.
  nxrt_value View();

 private:
  nxrt_value_kind kind_ = NXRT_VALUE_NONE;
  std::vector<OwnedTensor> tensors_;
  std::vector<nxrt_tensor> element_views_;
};

// The elements of a sequence input.
inline std::span<const nxrt_tensor> ElementsOf(const nxrt_value& v) {
  return v.sequence_length ? std::span<const nxrt_tensor>(v.sequence, v.sequence_length)
                           : std::span<const nxrt_tensor>();
}

// `count` values of kind NONE, for a body's results to be written into.
std::vector<nxrt_value> EmptyValues(size_t count);
// A value viewing `t`.
nxrt_value TensorValue(const nxrt_tensor& t);

// Output `index` as a copy of the sequence `elements`.
void WriteSequence(sdk::ComputeContext& ctx, std::span<nxrt_value> outputs, size_t index,
                   std::span<const nxrt_tensor> elements);
// Output `index` as a copy of `value`: a tensor, a sequence or nothing.
void WriteValue(sdk::ComputeContext& ctx, std::span<nxrt_value> outputs, size_t index,
                const nxrt_value& value);

}  // namespace nxrt::cpu
