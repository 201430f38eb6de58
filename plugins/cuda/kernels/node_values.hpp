// Host-side helpers the shape-driven kernels share: a node's label for
// errors, integer constants (shapes, axes, split sizes) read from their
// bytes, axis normalisation and row-major strides.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "nxrt/ep_sdk.hpp"

namespace nxrt::cuda {

inline std::string NodeLabel(const sdk::Node& node) {
  return "node '" + std::string(node.name()) + "' (" + std::string(node.op_type()) + ")";
}

// The values of an int32 or int64 tensor held in host bytes.
inline std::vector<int64_t> ReadIntegers(nxrt_dtype dtype, const void* bytes, size_t byte_size) {
  std::vector<int64_t> values;
  if (dtype == NXRT_DTYPE_INT64) {
    values.resize(byte_size / sizeof(int64_t));
    if (!values.empty()) std::memcpy(values.data(), bytes, values.size() * sizeof(int64_t));
  } else if (dtype == NXRT_DTYPE_INT32) {
    std::vector<int32_t> narrow(byte_size / sizeof(int32_t));
    if (!narrow.empty()) std::memcpy(narrow.data(), bytes, narrow.size() * sizeof(int32_t));
    values.assign(narrow.begin(), narrow.end());
  } else {
    throw sdk::Error(NXRT_STATUS_UNSUPPORTED, "integer input of type " + DtypeName(dtype));
  }
  return values;
}

inline int64_t NormalizeAxis(int64_t axis, int64_t rank, const std::string& label) {
  const int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= rank) {
    throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT, label + ": axis " + std::to_string(axis) +
                                                       " is outside rank " + std::to_string(rank));
  }
  return normalized;
}

inline std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

}  // namespace nxrt::cuda
