// Test data that is not periodic over a kernel's extent and has no two
// neighbours equal: scale · sin(step · i + 0.3) for i < count.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace nxrt_test {

inline std::vector<float> Wave(size_t count, double step, double scale) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = static_cast<float>(scale * std::sin(step * i + 0.3));
  return v;
}

}  // namespace nxrt_test
