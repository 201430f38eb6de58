// Helpers on value slots that several parts of the executor share: a value's
// bytes, an initializer bound to its slot, and dims written out for messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "executor/value_slot.hpp"
#include "nxrt/graph/weight_store.hpp"
#include "nxrt/tensor.hpp"

namespace nxrt::executor {

inline std::string FormatDims(std::span<const int64_t> dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  return text + "]";
}

inline Result<size_t> DenseBytes(DataType dtype, std::span<const int64_t> dims) {
  NXRT_ASSIGN_OR_RETURN(const uint64_t count, graph::ElementCount(dims));
  if (dtype == DataType::kString) return static_cast<size_t>(count * sizeof(nxrt_string_view));
  NXRT_ASSIGN_OR_RETURN(const uint64_t bytes, graph::RawByteSize(dtype, count));
  return static_cast<size_t>(bytes);
}

// Sizes a string slot for `count` elements, all empty, and points it at them.
inline void PrepareStrings(ValueSlot& slot, size_t count) {
  slot.strings.resize(count);
  slot.string_views.resize(count);
  for (size_t i = 0; i < count; ++i) {
    slot.strings[i].clear();
    slot.string_views[i] = {slot.strings[i].data(), 0};
  }
  slot.data = slot.string_views.data();
  slot.byte_size = count * sizeof(nxrt_string_view);
}

// Binds `slot` to an initializer's data, which the weight store keeps.
inline void BindWeight(ValueSlot& slot, const graph::TensorData& data) {
  slot.ready = true;
  slot.kind = NXRT_VALUE_TENSOR;
  slot.dtype = data.dtype;
  slot.dims = data.dims;
  if (data.dtype == DataType::kString) {
    PrepareStrings(slot, data.strings.size());
    for (size_t s = 0; s < data.strings.size(); ++s) {
      slot.strings[s] = data.strings[s];
      slot.string_views[s] = {slot.strings[s].data(), slot.strings[s].size()};
    }
  } else {
    slot.data = const_cast<std::byte*>(data.bytes.data());
    slot.byte_size = data.bytes.size();
  }
}

}  // namespace nxrt::executor
