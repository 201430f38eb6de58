// A tensor in a few words for the screen: dtype, shape and its first values
// ("float32 [2,3] 0.5, 1, -2, ..."), and the same facts as JSON members.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/json_writer.hpp"
#include "nxrt/tensor.hpp"

namespace nxrt::cli {

inline constexpr size_t kSummaryValueCount = 8;

// "[2,3]"; "[]" for a scalar.
std::string ShapeText(std::span<const int64_t> shape);
std::string ShapeText(const std::vector<std::string>& shape);

// The first `count` values as text, strings quoted.
std::vector<std::string> FirstValues(const Tensor& tensor, size_t count = kSummaryValueCount);

std::string SummarizeTensor(const Tensor& tensor);

// Members "dtype", "shape" and "first_values" of the object being written.
void WriteTensorSummary(JsonWriter& json, const Tensor& tensor);

}  // namespace nxrt::cli
