#include "attention/masked_softmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "isa_clones.hpp"
#include "vector_math.hpp"

namespace nxrt::cpu {

void SoftcapInPlace(float* row, int64_t count, float softcap) {
  for (int64_t i = 0; i < count; ++i) row[i] = softcap * std::tanh(row[i] / softcap);
}

// Sixteen independent lanes for the max and the sum: a single running max or
// sum is one dependent chain the vectoriser must keep in order.
NXRT_ISA_CLONES void SoftmaxInPlace(float* row, int64_t count, const float* sink) {
  constexpr int64_t kLanes = 16;
  const int64_t whole = count - count % kLanes;
  float max = sink ? *sink : -std::numeric_limits<float>::infinity();
  float lane_max[kLanes];
  std::fill(lane_max, lane_max + kLanes, max);
  for (int64_t i = 0; i < whole; i += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) lane_max[l] = std::max(lane_max[l], row[i + l]);
  }
  for (int64_t i = whole; i < count; ++i) max = std::max(max, row[i]);
  for (int64_t l = 0; l < kLanes; ++l) max = std::max(max, lane_max[l]);
  if (std::isinf(max) && max < 0) {
    std::fill(row, row + count, 0.0f);
    return;
  }
  float lane_sum[kLanes] = {};
  for (int64_t i = 0; i < whole; i += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) {
      row[i + l] = ExpFloat(row[i + l] - max);
      lane_sum[l] += row[i + l];
    }
  }
  float sum = sink ? ExpFloat(*sink - max) : 0.0f;
  for (int64_t i = whole; i < count; ++i) {
    row[i] = ExpFloat(row[i] - max);
    sum += row[i];
  }
  for (int64_t l = 0; l < kLanes; ++l) sum += lane_sum[l];
  const float inverse = 1.0f / sum;
  for (int64_t i = 0; i < count; ++i) row[i] *= inverse;
}

}  // namespace nxrt::cpu
