// Softmax or LogSoftmax of float rows, planned once for its shape through
// oneDNN: the tensor viewed as [outer, n, inner], normalised along n.
#pragma once

#include <cstdint>
#include <optional>

#include "primitive_runner.hpp"

namespace nxrt::cpu::onednn {

class FloatSoftmax {
 public:
  // nullopt when oneDNN has no plan. Every extent must be positive.
  static std::optional<FloatSoftmax> Plan(int64_t outer, int64_t n, int64_t inner, bool log);

  void Run(const float* x, float* y) {
    const void* buffers[] = {x, y};
    runner_.Run(buffers);
  }

 private:
  FloatSoftmax() = default;
  PrimitiveRunner runner_;
};

}  // namespace nxrt::cpu::onednn
