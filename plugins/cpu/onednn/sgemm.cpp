#include "sgemm.hpp"

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <string>

#include "nxrt/ep_sdk.hpp"

namespace nxrt::cpu::onednn {

void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
           int threads) {
  const int previous = omp_get_max_threads();
  if (previous != threads) omp_set_num_threads(threads);
  const dnnl_status_t status = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha,
                                          a, lda, b, ldb, beta, c, ldc);
  if (previous != threads) omp_set_num_threads(previous);
  if (status != dnnl_success) {
    throw sdk::Error(NXRT_STATUS_INTERNAL, "oneDNN's sgemm refused a " + std::to_string(m) + "x" +
                                               std::to_string(k) + " by " + std::to_string(k) +
                                               "x" + std::to_string(n) + " product (status " +
                                               std::to_string(static_cast<int>(status)) + ")");
  }
}

}  // namespace nxrt::cpu::onednn
