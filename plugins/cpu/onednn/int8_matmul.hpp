// An 8-bit integer matrix product planned once through oneDNN:
//   P[M,N] = A[M,K] x B[K,N], summed exactly in int32,
// A uint8 or int8 and B int8, both row-major. oneDNN's integer kernels
// multiply four byte pairs per lane and instruction (VNNI where the CPU has
// it); planned for its M, a product runs on oneDNN's batch-reduce kernels,
// a fifth faster than its GEMM, which is all a plan leaving M to run time
// gets.
//
// A requantised plan instead writes
//   Y[M,N] = saturate(round((A - a_zero) x B * scales[n]) + y_zero)
// in uint8 or int8, the zero points given at run time, the scales planned
// (oneDNN's batch-reduce kernels take no scales at run time): the whole of
// QLinearMatMul with a symmetric B in one pass. Zero points and
// scales are the caller's (quantized/integer_product.hpp): they are cheaper
// as corrections of P than as oneDNN attributes, which would need a plan per
// value. B is read as given, or, for a constant B, in the layout oneDNN
// prefers, prepared once.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "nxrt/ep_abi.h"
#include "prepared_weights.hpp"
#include "primitive_runner.hpp"

namespace nxrt::cpu::onednn {

struct Int8Requantisation {
  nxrt_dtype y_dtype = NXRT_DTYPE_UINT8;  // or NXRT_DTYPE_INT8
  std::vector<float> scales;              // one, or one per column
};

class Int8Matmul {
 public:
  // `a_dtype` is NXRT_DTYPE_UINT8 or NXRT_DTYPE_INT8; M, N and K positive.
  // `prepared_b`: B is read in weights_desc(), made by PrepareWeights.
  // `requantisation`: null for the sums, else the requantised result's.
  // Throws the EP's unsupported error when oneDNN cannot plan the product.
  Int8Matmul(nxrt_dtype a_dtype, int64_t m, int64_t n, int64_t k, bool prepared_b,
             const Int8Requantisation* requantisation = nullptr);

  int64_t m() const { return m_; }
  int64_t n() const { return n_; }
  int64_t k() const { return k_; }
  bool prepared_b() const { return prepared_b_; }

  // B ([K,N] row-major int8) copied into the layout Run reads, for a plan
  // made with `prepared_b`.
  std::shared_ptr<PreparedWeights> PrepareWeights(const int8_t* b) const;
  bool Takes(const PreparedWeights& b) const { return b.desc() == b_; }

  // `b` is B as given, or its prepared copy's data() for a plan made with
  // `prepared_b`. Allocates nothing.
  void Run(const void* a, const void* b, int32_t* p);
  // The same for a requantised plan.
  void RunRequantised(const void* a, int32_t a_zero, const void* b, int32_t y_zero, void* y);

  // The requantised plan's scales; empty for the sums.
  const std::vector<float>& scales() const { return scales_; }

 private:
  int64_t m_;
  int64_t n_;
  int64_t k_;
  bool prepared_b_;
  std::vector<float> scales_;
  dnnl::memory::desc b_;
  PrimitiveRunner runner_;
};

}  // namespace nxrt::cpu::onednn
