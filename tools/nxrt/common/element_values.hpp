// Reading single elements of a dense tensor's little-endian bytes as
// numbers, for on-screen summaries and tolerant comparison. Floating types
// (float16 and bfloat16 included) read as doubles; integers and bools too.
// Complex tensors read as their interleaved real and imaginary parts.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "nxrt/tensor.hpp"

namespace nxrt::cli {

// float16, bfloat16, float32, float64, complex64 and complex128: compared
// with a tolerance rather than exactly.
bool IsFloatingPoint(DataType dtype);

// How many scalars ReadScalar can read from `byte_size` bytes of `dtype`;
// 0 for dtypes it cannot read (strings, float8, packed 4- and 2-bit types).
size_t ScalarCount(DataType dtype, size_t byte_size);

// The `index`-th scalar; complex numbers count two scalars each.
double ReadScalar(DataType dtype, const void* data, size_t index);

// The `index`-th scalar as text: integers exactly, floats to 6 significant
// digits, bools as true/false.
std::string FormatScalar(DataType dtype, const void* data, size_t index);

}  // namespace nxrt::cli
