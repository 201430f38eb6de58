// Float products of equal batches, Y[i] = A[i] B[i] for every i of the
// batch, all row-major and contiguous, as one oneDNN matmul whose every
// extent is a runtime one: planned once, serving every shape, and run as one
// call instead of one per batch item. The attention scores of small heads
// ([2,4,6,32] x [2,4,32,6]) took a primitive call per head, 0.65 us each.
#pragma once

#include <cstdint>
#include <optional>

#include "primitive_runner.hpp"

namespace nxrt::cpu::onednn {

class BatchedFloatMatmul {
 public:
  // The plan, or nullopt where oneDNN has only its reference kernel.
  static std::optional<BatchedFloatMatmul> Plan();

  // `a` [batch, m, k], `b` [batch, k, n], `y` [batch, m, n]; every extent
  // positive. Allocates only when an extent differs from the previous call's.
  void Run(int64_t batch, int64_t m, int64_t n, int64_t k, const float* a, const float* b,
           float* y);

 private:
  BatchedFloatMatmul() = default;

  PrimitiveRunner runner_;
  int64_t batch_ = 0, m_ = 0, n_ = 0, k_ = 0;  // the extents the runner is bound at
};

}  // namespace nxrt::cpu::onednn
