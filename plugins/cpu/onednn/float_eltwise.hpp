// An elementwise float function over a contiguous tensor, planned once for
// its element count through oneDNN, whose JIT kernels use the widest vectors
// the CPU has (the EP's own loops are compiled for baseline x86-64).
#pragma once

#include <cstdint>
#include <optional>

#include "primitive_runner.hpp"

namespace nxrt::cpu::onednn {

class FloatEltwise {
 public:
  // y = f(x) for oneDNN's `algorithm` with its `alpha` and `beta` over
  // `count` elements; nullopt when oneDNN has no plan. `count` must be
  // positive.
  static std::optional<FloatEltwise> Plan(dnnl::algorithm algorithm, float alpha, float beta,
                                          int64_t count);

  void Run(const float* x, float* y) {
    const void* buffers[] = {x, y};
    runner_.Run(buffers);
  }

 private:
  FloatEltwise() = default;
  PrimitiveRunner runner_;
};

}  // namespace nxrt::cpu::onednn
