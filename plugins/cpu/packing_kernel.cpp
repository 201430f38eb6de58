#include "packing_kernel.hpp"

#include <cblas.h>

#include <algorithm>

#include "onednn/sgemm.hpp"
#include "parallel_blocks.hpp"

namespace nxrt::cpu {
namespace {

// The least share of B worth handing to another thread: below it, opening
// the parallel region costs more than the second core saves.
constexpr int64_t kBlockElements = 32 * 1024;

// The `index`-th of `count` near-equal runs of [0, extent).
int64_t RunStart(int64_t extent, int index, int count) {
  return extent * index / count;
}

// A row times B as given ([K, N]) runs on oneDNN's sgemm for a B of this
// many elements: 1.35-1.7x OpenBLAS's transposed GEMV on a decoder's
// 256x256 projections (bench/math_libraries.cpp: 3.5 against 4.7 us, 4.6
// against 8.0 on a busier run). Below, OpenBLAS is faster; above, B streams
// from memory, where OpenBLAS's GEMV keeps pace or better (768x256: 10.9
// against 10.6 us, 17.9 against 20.4; 1536x512: 84 against 104 us).
constexpr int64_t kOneDnnLeastElements = 128 * 128;
constexpr int64_t kOneDnnMostElements = 256 * 256;

// y[n] = alpha * a[rows] b[rows, n] + beta * y, on the calling thread.
void RowTimesRows(int64_t rows, int64_t n, float alpha, const float* a, const float* b, float beta,
                  float* y) {
  if (rows * n >= kOneDnnLeastElements && rows * n <= kOneDnnMostElements) {
    onednn::Sgemm(false, false, 1, n, rows, alpha, a, rows, b, n, beta, y, n, 1);
    return;
  }
  cblas_sgemv(CblasRowMajor, CblasTrans, static_cast<int>(rows), static_cast<int>(n), alpha, b,
              static_cast<int>(n), a, 1, beta, y, 1);
}

}  // namespace

void PackingKernel::ApplySettings(const EpSettings& settings, std::string_view /*node_name*/) {
  prepack_ = settings.prepack;
  threads_ = settings.threads;
  if (threads_ > 1 && !transpose_b_ && !b_dims_.empty()) {
    row_partials_.resize(static_cast<size_t>(threads_ - 1) * static_cast<size_t>(b_dims_.back()));
  }
}

void PackingKernel::PlanFloat(const onednn::MatmulShape& shape, bool whole_b) {
  plan_covers_ = false;
  if (dtype_ == NXRT_DTYPE_FLOAT64 || !Contains(FloatTypes{}, dtype_)) return;
  if (shape.m <= 1 || shape.n <= 0 || shape.k <= 0) return;
  plan_covers_ = true;
  if (float_matmul_ && whole_b == whole_b_ && float_matmul_->ServesRowsOf(shape)) {
    float_matmul_->BindRows(shape.m);
    return;
  }
  whole_b_ = whole_b;
  const bool prepared = constant_ && whole_b && prepack_;
  float_matmul_.emplace(
      shape, prepared ? onednn::WeightsLayout::kPreferred : onednn::WeightsLayout::kAsGiven);
  preferred_ = prepared ? constant_->Preferred(*float_matmul_, nullptr) : nullptr;
}

void PackingKernel::RowTimesMatrix(bool trans_b, int64_t n, int64_t k, float alpha, const float* a,
                                   const float* b, float beta, float* y) {
  const int64_t extent = trans_b ? n : k;  // B's rows
  const int blocks = static_cast<int>(
      std::clamp<int64_t>(n * k / kBlockElements, 1, std::min<int64_t>(threads_, extent)));
  if (blocks == 1 || (!trans_b && row_partials_.size() < static_cast<size_t>((blocks - 1) * n))) {
    if (!trans_b) {
      RowTimesRows(k, n, alpha, a, b, beta, y);
      return;
    }
    cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(n), static_cast<int>(k), alpha, b,
                static_cast<int>(k), a, 1, beta, y, 1);
    return;
  }
  RunBlocks(blocks, [&](int block) {
    const int64_t begin = RunStart(extent, block, blocks);
    const int rows = static_cast<int>(RunStart(extent, block + 1, blocks) - begin);
    if (trans_b) {
      cblas_sgemv(CblasRowMajor, CblasNoTrans, rows, static_cast<int>(k), alpha, b + begin * k,
                  static_cast<int>(k), a, 1, beta, y + begin, 1);
    } else {
      float* sums = block == 0 ? y : row_partials_.data() + (block - 1) * n;
      RowTimesRows(rows, n, alpha, a + begin, b + begin * n, block == 0 ? beta : 0.0f, sums);
    }
  });
  if (trans_b) return;
  for (int block = 1; block < blocks; ++block) {
    const float* sums = row_partials_.data() + (block - 1) * n;
    for (int64_t j = 0; j < n; ++j) y[j] += sums[j];
  }
}

}  // namespace nxrt::cpu
