// MaxPool of a float NCHW tensor (one to three spatial axes, strides,
// dilations, uneven pads, ceil mode), planned once for its shape through
// oneDNN.
#pragma once

#include <cstdint>
#include <optional>

#include "primitive_runner.hpp"
#include "window_geometry.hpp"

namespace nxrt::cpu::onednn {

class FloatMaxPool {
 public:
  // nullopt when oneDNN has no plan. Every extent must be positive.
  static std::optional<FloatMaxPool> Plan(int64_t batch, int64_t channels,
                                          const WindowGeometry& geometry);

  void Run(const float* x, float* y) {
    const void* buffers[] = {x, y};
    runner_.Run(buffers);
  }

 private:
  FloatMaxPool() = default;
  PrimitiveRunner runner_;
};

}  // namespace nxrt::cpu::onednn
