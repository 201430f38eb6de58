#include "attention/head_products.hpp"

#include <cblas.h>

#include "onednn/sgemm.hpp"

namespace nxrt::cpu {
namespace {

// Where oneDNN's sgemm overtakes OpenBLAS's, in multiply-adds.
constexpr int64_t kOneDnnProducts = 32 * 32 * 64;

}  // namespace

// One row (a decode step of one head) goes through gemv, which OpenBLAS runs
// several times faster than a one-row gemm.
void ScoresQk(ConstRows q, ConstRows k, int64_t rows, int64_t keys, int64_t depth, float scale,
              Rows scores) {
  if (rows == 1) {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(keys), static_cast<int>(depth), scale,
                k.data, static_cast<int>(k.stride), q.data, 1, 0.0f, scores.data, 1);
    return;
  }
  if (rows * keys * depth >= kOneDnnProducts) {
    onednn::Sgemm(false, true, rows, keys, depth, scale, q.data, q.stride, k.data, k.stride, 0.0f,
                  scores.data, scores.stride, 1);
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows),
              static_cast<int>(keys), static_cast<int>(depth), scale, q.data,
              static_cast<int>(q.stride), k.data, static_cast<int>(k.stride), 0.0f, scores.data,
              static_cast<int>(scores.stride));
}

void WeightedSum(ConstRows probs, ConstRows v, int64_t rows, int64_t keys, int64_t depth,
                 Rows out) {
  if (rows == 1) {
    cblas_sgemv(CblasRowMajor, CblasTrans, static_cast<int>(keys), static_cast<int>(depth), 1.0f,
                v.data, static_cast<int>(v.stride), probs.data, 1, 0.0f, out.data, 1);
    return;
  }
  if (rows * keys * depth >= kOneDnnProducts) {
    onednn::Sgemm(false, false, rows, depth, keys, 1.0f, probs.data, probs.stride, v.data, v.stride,
                  0.0f, out.data, out.stride, 1);
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows),
              static_cast<int>(depth), static_cast<int>(keys), 1.0f, probs.data,
              static_cast<int>(probs.stride), v.data, static_cast<int>(v.stride), 0.0f, out.data,
              static_cast<int>(out.stride));
}

}  // namespace nxrt::cpu
