// Whether a session's output matches the expected value of a test case:
// kinds (tensor, sequence, absent optional), dtypes and shapes must match;
// floating values may differ by |actual - expected| <= atol + rtol*|expected|,
// NaN matches NaN and an infinity only itself; everything else, strings
// included, must be equal. A mismatch is described by its first differing
// element with both values.
#pragma once

#include <string>

#include "nxrt/graph/test_data.hpp"
#include "nxrt/tensor.hpp"
#include "nxrt/value.hpp"

namespace nxrt::cli {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
};

// Empty when they match, else why not, e.g. "element 3 is 0.5, expected 0.25".
std::string CompareTensor(const Tensor& actual, const graph::TestTensor& expected,
                          const Tolerance& tolerance);
std::string CompareValue(const Value& actual, const graph::TestValue& expected,
                         const Tolerance& tolerance);

}  // namespace nxrt::cli
