// A float matrix product planned once for its shape through oneDNN:
//   Y[M,N] = act(alpha * op(A)[M,K] * op(B)[K,N] + bias + beta * Y)
//            + residual
// all row-major, op a transpose where asked, each term after the product
// only where the shape asks for it: bias a row [N] added to every row (with
// alpha 1 only), residual a full [M,N] matrix, act one of
// oneDNN's eltwise algorithms. The terms are applied while the product's tiles are still in
// registers, saving the passes over Y that separate ops would make. A and Y
// are read and written as given; B too, or, for a constant B, in the blocked
// layout oneDNN prefers (about a fifth faster at 64 rows, two fifths at 16),
// prepared once.
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
  bool bias = false;
  dnnl::algorithm activation = dnnl::algorithm::undef;  // undef: none
  bool residual = false;
};

enum class WeightsLayout {
  kAsGiven,    // B row-major (or transposed), as the model holds it
  kPreferred,  // B in oneDNN's layout: weights_desc(), made by ReorderOnce
};

class FloatMatmul {
 public:
  // M, N and K must be positive. Throws the EP's unsupported error when
  // oneDNN cannot plan the product.
  explicit FloatMatmul(const MatmulShape& shape, WeightsLayout layout = WeightsLayout::kAsGiven);

  const MatmulShape& shape() const { return shape_; }
  WeightsLayout layout() const { return layout_; }

  // Whether this plan computes `other` once given its row count (BindRows):
  // the same product but for M, and a plan that leaves M to run time.
  bool ServesRowsOf(const MatmulShape& other) const;
  // Makes the calls that follow compute `m` rows, for a plan that serves
  // them (ServesRowsOf). Allocates only when `m` is new to the plan.
  void BindRows(int64_t m);

  // B as the model holds it, and as Run reads it.
  const dnnl::memory::desc& given_weights_desc() const { return given_b_; }
  const dnnl::memory::desc& weights_desc() const { return b_; }

  // `b` is laid out as weights_desc(); `bias` and `residual` are
  // read where the shape asked for them and ignored otherwise.
  void Run(const float* a, const float* b, float* y, const float* bias = nullptr,
           const float* residual = nullptr);

 private:
  MatmulShape shape_;  // its M: the rows the runner's A and Y are bound at
  WeightsLayout layout_;
  bool runtime_m_ = false;
  dnnl::memory::desc given_b_;
  dnnl::memory::desc b_;
  PrimitiveRunner runner_;
};

}  // namespace nxrt::cpu::onednn
