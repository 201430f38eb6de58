// The two matrix products of one attention head in float32, reading heads in
// place through row strides (a head of a [B, S, heads * D] tensor or of a KV
// cache is a strided matrix): scores[S, T] = scale * Q[S, D] K[T, D]^T and
// out[S, Dv] = P[S, T] V[T, Dv], on the calling thread: through OpenBLAS up
// to 32x32 rows and keys of 64 (its AVX kernels beat plain loops even at a
// decode step's sizes, and oneDNN's sgemm there), past that on oneDNN's
// sgemm, about 2x OpenBLAS's on a prefill's heads.
#pragma once

#include <cstdint>

namespace nxrt::cpu {

// A row-major matrix view: element (r, c) at data[r * stride + c].
struct ConstRows {
  const float* data;
  int64_t stride;
};
struct Rows {
  float* data;
  int64_t stride;
};

// scores = scale * q[rows, depth] * k[keys, depth]^T.
void ScoresQk(ConstRows q, ConstRows k, int64_t rows, int64_t keys, int64_t depth, float scale,
              Rows scores);

// out = probs[rows, keys] * v[keys, depth].
void WeightedSum(ConstRows probs, ConstRows v, int64_t rows, int64_t keys, int64_t depth, Rows out);

}  // namespace nxrt::cpu
