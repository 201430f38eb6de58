// Softmax over one row of attention scores, in place, with the variants the
// attention ops need: an optional softcap (softcap * tanh(x / softcap)) before
// it, "smooth" softmax (an extra zero logit in the denominator, so a row may
// sum to less than one), and a row whose every score is -inf (all keys
// masked) becoming all zeros instead of NaN.
#pragma once

#include <cstdint>

namespace nxrt::cpu {

void SoftcapInPlace(float* row, int64_t count, float softcap);

void SoftmaxInPlace(float* row, int64_t count, bool smooth);

}  // namespace nxrt::cpu
