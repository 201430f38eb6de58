// oneDNN's row-major sgemm, for products that have no plan of their own
// (a recurrent layer's input projection and steps, an attention head's
// products). On its AVX-512 kernels it runs 2x OpenBLAS's sgemm on a
// recurrent layer's projection (49x768 by 64 or 192: 25 against 55 us,
// 78 against 165 us), a one-row product on a transposed B 1.6x OpenBLAS's
// GEMV on B as given, and an attention head's products of 32 rows and keys
// or more about 2x.
#pragma once

#include <cstdint>

namespace nxrt::cpu::onednn {

// c[m, n] = alpha · op(a)[m, k] · op(b)[k, n] + beta · c, all row-major with row
// strides lda, ldb and ldc; op transposes when its flag is set. Runs on
// `threads` OpenMP threads (positive), the calling thread's count restored
// afterwards. m, n and k must be positive; the pointers must not be null.
void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
           int threads);

}  // namespace nxrt::cpu::onednn
