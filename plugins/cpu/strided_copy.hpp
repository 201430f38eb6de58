// Copies a strided view of a tensor into contiguous memory: the workhorse of
// the data-movement ops (Transpose, Slice, Expand, Split, DepthToSpace...),
// which differ only in the offset and per-axis strides of the view they read.
// Elements are moved as opaque words of their byte size, so one copy serves
// every fixed-size dtype.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tensor.hpp"

namespace nxrt::cpu {

// dst[i] = src[offset + sum(index_k * strides[k])] over the row-major walk of
// `dims`; strides and offset are in elements of `element_size` bytes.
void StridedCopy(size_t element_size, const Dims& dims, const Dims& strides, const void* src,
                 int64_t offset, void* dst);

}  // namespace nxrt::cpu
