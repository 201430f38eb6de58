#include "packing_kernel.hpp"

#include <cblas.h>

#include <algorithm>

namespace nxrt::cpu {
namespace {

// The least share of B worth handing to another thread: below it, opening
// the parallel region costs more than the second core saves.
constexpr int64_t kBlockElements = 32 * 1024;
// Column blocks start on a cache line.
constexpr int64_t kColumnAlignment = 16;

// y[begin, end) of RowTimesMatrix.
void RowTimesColumns(bool trans_b, int64_t n, int64_t k, float alpha, const float* a,
                     const float* b, float beta, float* y, int64_t begin, int64_t end) {
  const int width = static_cast<int>(end - begin);
  if (trans_b) {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, width, static_cast<int>(k), alpha, b + begin * k,
                static_cast<int>(k), a, 1, beta, y + begin, 1);
  } else {
    cblas_sgemv(CblasRowMajor, CblasTrans, static_cast<int>(k), width, alpha, b + begin,
                static_cast<int>(n), a, 1, beta, y + begin, 1);
  }
}

}  // namespace

void RowTimesMatrix(int threads, bool trans_b, int64_t n, int64_t k, float alpha, const float* a,
                    const float* b, float beta, float* y) {
  const int blocks = static_cast<int>(std::clamp<int64_t>(n * k / kBlockElements, 1, threads));
  if (blocks == 1) {
    RowTimesColumns(trans_b, n, k, alpha, a, b, beta, y, 0, n);
    return;
  }
  const int64_t width =
      ((n + blocks - 1) / blocks + kColumnAlignment - 1) / kColumnAlignment * kColumnAlignment;
#pragma omp parallel for schedule(static) num_threads(blocks)
  for (int block = 0; block < blocks; ++block) {
    const int64_t begin = std::min(n, block * width);
    const int64_t end = std::min(n, begin + width);
    if (begin < end) RowTimesColumns(trans_b, n, k, alpha, a, b, beta, y, begin, end);
  }
}

}  // namespace nxrt::cpu
