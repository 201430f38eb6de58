// Softmax over one row of attention scores, in place, with the variants the
// attention ops need: an optional softcap (softcap * tanh(x / softcap)) before
// it, a "sink" logit that joins the denominator but attends to nothing (smooth
// softmax is a sink of 0; a head sink is learned), so a row may sum to less
// than one, and a row whose every score is -inf (all keys masked) becoming
// all zeros instead of NaN.
#pragma once

#include <cstdint>

namespace nxrt::cpu {

void SoftcapInPlace(float* row, int64_t count, float softcap);

// `sink`: nullptr for a plain softmax.
void SoftmaxInPlace(float* row, int64_t count, const float* sink);

}  // namespace nxrt::cpu
