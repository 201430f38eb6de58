#include "attention/head_products.hpp"

#include <cblas.h>

#include <algorithm>

namespace nxrt::cpu {
namespace {

// Below this many multiply-adds a product runs as loops.
constexpr int64_t kBlasThreshold = 16384;

}  // namespace

void ScoresQk(ConstRows q, ConstRows k, int64_t rows, int64_t keys, int64_t depth, float scale,
              Rows scores) {
  if (rows * keys * depth >= kBlasThreshold) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows),
                static_cast<int>(keys), static_cast<int>(depth), scale, q.data,
                static_cast<int>(q.stride), k.data, static_cast<int>(k.stride), 0.0f, scores.data,
                static_cast<int>(scores.stride));
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* qr = q.data + r * q.stride;
    float* out = scores.data + r * scores.stride;
    for (int64_t t = 0; t < keys; ++t) {
      const float* kt = k.data + t * k.stride;
      float dot = 0.0f;
      for (int64_t d = 0; d < depth; ++d) dot += qr[d] * kt[d];
      out[t] = dot * scale;
    }
  }
}

void WeightedSum(ConstRows probs, ConstRows v, int64_t rows, int64_t keys, int64_t depth,
                 Rows out) {
  if (rows * keys * depth >= kBlasThreshold) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows),
                static_cast<int>(depth), static_cast<int>(keys), 1.0f, probs.data,
                static_cast<int>(probs.stride), v.data, static_cast<int>(v.stride), 0.0f, out.data,
                static_cast<int>(out.stride));
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = probs.data + r * probs.stride;
    float* o = out.data + r * out.stride;
    std::fill(o, o + depth, 0.0f);
    for (int64_t t = 0; t < keys; ++t) {
      const float w = p[t];
      const float* vt = v.data + t * v.stride;
      for (int64_t d = 0; d < depth; ++d) o[d] += w * vt[d];
    }
  }
}

}  // namespace nxrt::cpu
