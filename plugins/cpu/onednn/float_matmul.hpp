// A float matrix product planned once for its shape through oneDNN:
//   Y[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * Y
// all row-major, op a transpose where asked, every operand read and written
// as given.
#pragma once

#include <cstdint>

#include "primitive_runner.hpp"

namespace nxrt::cpu::onednn {

struct MatmulShape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  bool trans_a = false;
  bool trans_b = false;
  float alpha = 1.0f;
  float beta = 0.0f;  // 0: Y is overwritten, whatever it held
};

class FloatMatmul {
 public:
  // M, N and K must be positive. Throws the EP's unsupported error when
  // oneDNN cannot plan the product.
  explicit FloatMatmul(const MatmulShape& shape);

  void Run(const float* a, const float* b, float* y) {
    const void* buffers[] = {a, b, y};
    runner_.Run(buffers);
  }

 private:
  PrimitiveRunner runner_;
};

}  // namespace nxrt::cpu::onednn
