#include "attention/masked_softmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "vector_math.hpp"

namespace nxrt::cpu {

void SoftcapInPlace(float* row, int64_t count, float softcap) {
  for (int64_t i = 0; i < count; ++i) row[i] = softcap * std::tanh(row[i] / softcap);
}

void SoftmaxInPlace(float* row, int64_t count, const float* sink) {
  float max = sink ? *sink : -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < count; ++i) max = std::max(max, row[i]);
  if (std::isinf(max) && max < 0) {
    std::fill(row, row + count, 0.0f);
    return;
  }
  float sum = sink ? ExpFloat(*sink - max) : 0.0f;
  for (int64_t i = 0; i < count; ++i) {
    row[i] = ExpFloat(row[i] - max);
    sum += row[i];
  }
  const float inverse = 1.0f / sum;
  for (int64_t i = 0; i < count; ++i) row[i] *= inverse;
}

}  // namespace nxrt::cpu
