// The integer product under MatMulInteger and QLinearMatMul:
//   Y[M,N] = (A[M,K] - a_zero) x (B[K,N] - b_zero), exactly, in int32,
// A and B each uint8 or int8, a_zero one value or one per row, b_zero one or
// one per column. oneDNN multiplies the raw bytes (onednn/int8_matmul.hpp)
// and the zero points come in as corrections, from B's column sums and A's
// row sums:
//   Y = A B - a_zero[m] colsum_B[n] - b_zero[n] (rowsum_A[m] - K a_zero[m])
// oneDNN takes int8 B only, so a uint8 B is shifted by -128 and its zero
// points with it, which leaves every difference as it was.
//
// A constant B is prepared once, shifted, in oneDNN's layout and with its
// column sums, and shared by the node's shape variants (PreparedB); a B fed
// as an input is shifted on every call, and summed where A has zero points,
// into buffers made on the first. The oneDNN plans are made when first run.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "nxrt/ep_abi.h"
#include "nxrt/ep_sdk.hpp"
#include "onednn/int8_matmul.hpp"

namespace nxrt::cpu {

class IntegerProduct {
 public:
  // A constant B as the product reads it; immutable once made.
  class PreparedB : public sdk::SharedState {
   public:
    PreparedB(const onednn::Int8Matmul& plan, nxrt_dtype dtype, const void* b);
    nxrt_dtype dtype() const { return dtype_; }
    const onednn::PreparedWeights& weights() const { return *weights_; }
    std::span<const int32_t> column_sums() const { return column_sums_; }

   private:
    nxrt_dtype dtype_;
    std::shared_ptr<onednn::PreparedWeights> weights_;
    std::vector<int32_t> column_sums_;
  };

  // `a_dtype`, `b_dtype`: NXRT_DTYPE_UINT8 or NXRT_DTYPE_INT8; M, N and K
  // positive.
  IntegerProduct(nxrt_dtype a_dtype, nxrt_dtype b_dtype, int64_t m, int64_t n, int64_t k);

  // Makes this product read the constant B `b` ([K,N] of b_dtype) from now on.
  void PrepareB(const void* b);
  // Takes another variant's prepared B; false when it does not fit.
  bool AdoptB(const std::shared_ptr<sdk::SharedState>& state);
  std::shared_ptr<sdk::SharedState> prepared_b() const { return prepared_; }
  bool has_prepared_b() const { return prepared_ != nullptr; }

  // Y. `b` is B as given, ignored once B is prepared. `a_zero` holds 1
  // or M values and `b_zero` 1 or N, each in A's or B's own range.
  void Run(const void* a, std::span<const int32_t> a_zero, const void* b,
           std::span<const int32_t> b_zero, int32_t* y);

  // saturate(round(Y * multipliers[n]) + y_zero) into `y` (of `y_dtype`,
  // uint8 or int8) in one pass of oneDNN's, for B's zero points those of a
  // symmetric int8 B (0, or 128 for a uint8 B); otherwise false, computing
  // nothing. `multipliers` holds 1 or N values; a plan is made for them the
  // first time they are seen.
  bool RunRequantised(const void* a, int32_t a_zero, const void* b, std::span<const int32_t> b_zero,
                      const std::vector<float>& multipliers, nxrt_dtype y_dtype, int32_t y_zero,
                      void* y);

 private:
  nxrt_dtype a_dtype_;
  nxrt_dtype b_dtype_;
  // B as int8: its prepared copy, `b` itself, or `b` shifted into shifted_b_.
  const void* SignedB(const void* b);

  int64_t m_, n_, k_;
  // The plans, each made when first needed: of the sums (made by PrepareB
  // for a constant B, whose layout it fixes) and of the requantised result.
  std::optional<onednn::Int8Matmul> sums_;
  std::optional<onednn::Int8Matmul> requantised_;
  std::shared_ptr<PreparedB> prepared_;
  std::vector<int8_t> shifted_b_;      // a uint8 B fed as an input, shifted
  std::vector<int32_t> column_sums_;   // of a B fed as an input
  std::vector<int32_t> b_zero_;        // b_zero shifted as B is
  std::vector<int32_t> shifted_rows_;  // rowsum_A[m] - K a_zero[m]
};

}  // namespace nxrt::cpu
