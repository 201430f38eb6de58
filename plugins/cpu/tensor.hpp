// Reading kernel inputs and producing outputs on host memory: dims, element
// counts, typed data, integer inputs read as int64 (shapes, axes, indices),
// and the one place outputs are obtained, whether the host preallocated them
// or the kernel asks the host to allocate them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nxrt/ep_abi.h"
#include "nxrt/ep_sdk.hpp"

namespace nxrt::cpu {

using Dims = std::vector<int64_t>;

// Throws INVALID_ARGUMENT: an input the op cannot compute with.
[[noreturn]] void FailInvalid(const std::string& message);
// Throws UNSUPPORTED: something the CPU EP does not implement.
[[noreturn]] void FailUnsupported(const std::string& message);

int64_t ElementCount(std::span<const int64_t> dims);
inline std::span<const int64_t> DimsSpan(const nxrt_tensor& t) {
  return t.rank ? std::span<const int64_t>(t.dims, t.rank) : std::span<const int64_t>();
}
inline Dims DimsOf(const nxrt_tensor& t) {
  auto s = DimsSpan(t);
  return Dims(s.begin(), s.end());
}
inline int64_t ElementCount(const nxrt_tensor& t) {
  return ElementCount(DimsSpan(t));
}
// Whether two shapes are equal. A plain loop: ranks are tiny, and the memcmp
// call std::ranges::equal makes costs more than the compare on small tensors.
inline bool DimsEqual(std::span<const int64_t> a, std::span<const int64_t> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}
std::string DimsText(std::span<const int64_t> dims);  // "[2,3]"

inline bool IsPresent(std::span<const nxrt_value> inputs, size_t index) {
  return index < inputs.size() && inputs[index].kind == NXRT_VALUE_TENSOR;
}
inline const nxrt_tensor& TensorOf(std::span<const nxrt_value> inputs, size_t index) {
  return inputs[index].tensor;
}

template <typename T>
const T* DataAs(const nxrt_tensor& t) {
  return static_cast<const T*>(t.data);
}
template <typename T>
T* MutableDataAs(nxrt_tensor& t) {
  return static_cast<T*>(t.data);
}

// Element i of a uint8 or int8 tensor (a zero point, say), widened.
inline int32_t ByteValueAt(const nxrt_tensor& t, int64_t i) {
  return t.dtype == NXRT_DTYPE_UINT8 ? DataAs<uint8_t>(t)[i] : DataAs<int8_t>(t)[i];
}

// The values of an int32 or int64 tensor as int64.
std::vector<int64_t> ReadInt64s(const nxrt_tensor& t);
// The value of a one-element numeric tensor as double.
double ReadScalar(const nxrt_tensor& t);

// Normalises `axis` against `rank` (negative counts from the end); throws when
// out of range.
int64_t NormalizeAxis(int64_t axis, int64_t rank, const std::string& what);

// The element type attribute `name` of `node` names (Cast's `to`, a
// generator's `dtype`), or `fallback` when it is absent; throws when it
// holds a number that is no ONNX element type.
nxrt_dtype AttrDtype(const sdk::Node& node, const char* name, int64_t fallback);

// Output `index` with `dims` and `dtype`, ready to write: the host's
// preallocated buffer (whose dtype and dims must match) or one allocated through the
// host now. Also records it in outputs[index]. The preallocated case, every
// dispatch of a steady run, is inline.
nxrt_tensor& AllocateOrCheckOutput(sdk::ComputeContext& ctx, std::span<nxrt_value> outputs,
                                   size_t index, nxrt_dtype dtype, std::span<const int64_t> dims);
inline nxrt_tensor& PrepareOutput(sdk::ComputeContext& ctx, std::span<nxrt_value> outputs,
                                  size_t index, nxrt_dtype dtype, std::span<const int64_t> dims) {
  if (index < outputs.size()) {
    nxrt_tensor& given = outputs[index].tensor;
    if (outputs[index].kind == NXRT_VALUE_TENSOR && given.data != nullptr && given.dtype == dtype &&
        DimsEqual(DimsSpan(given), dims)) {
      return given;
    }
  }
  return AllocateOrCheckOutput(ctx, outputs, index, dtype, dims);
}

// Row-major strides of `dims` in elements.
Dims StridesOf(std::span<const int64_t> dims);

}  // namespace nxrt::cpu

namespace nxrt::cpu {

// Output `index` as a copy of `in` with `dims` (same element count); strings
// are stored through the host. Skips the copy when the host aliased them.
void WriteCopy(sdk::ComputeContext& ctx, std::span<nxrt_value> outputs, size_t index,
               const nxrt_tensor& in, std::span<const int64_t> dims);

}  // namespace nxrt::cpu
