// LayerNormalization of float rows with a per-element scale and optional
// shift, planned once for its shape through oneDNN.
#pragma once

#include <cstdint>
#include <optional>

#include "primitive_runner.hpp"

namespace nxrt::cpu::onednn {

class FloatLayerNorm {
 public:
  // Normalises each of `rows` rows of `columns` elements; nullopt when oneDNN
  // has no plan. Both extents must be positive.
  static std::optional<FloatLayerNorm> Plan(int64_t rows, int64_t columns, float epsilon,
                                            bool shift);

  // `scale` and `shift` hold `columns` elements; `shift` is null when the
  // plan has none.
  void Run(const float* x, const float* scale, const float* shift, float* y) {
    const void* buffers[] = {x, y, scale, shift};
    runner_.Run(std::span(buffers, shift != nullptr ? 4 : 3));
  }

 private:
  FloatLayerNorm() = default;
  PrimitiveRunner runner_;
};

}  // namespace nxrt::cpu::onednn
