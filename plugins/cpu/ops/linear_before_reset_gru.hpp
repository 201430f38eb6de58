// The GRU kernel on oneDNN (onednn/float_gru.hpp) for the nodes it takes:
// float, linear_before_reset, one direction, sequence-first, the default
// activations, no clip and no sequence_lens. recurrent_ops.cpp makes it
// when it can and its own layer otherwise.
#pragma once

#include <memory>

#include "cpu_kernel.hpp"
#include "recurrent/sequence_layer.hpp"

namespace nxrt::cpu {

// The kernel, or null when the node is not of that form or oneDNN has no
// plan. `bias`, `sequence_lens` and `initial_h` say which optional inputs
// the node has; `y_dims` and `state_dims` are Y's and Y_h's.
std::unique_ptr<CpuKernel> MakeLinearBeforeResetGru(nxrt_dtype dtype, const LayerConfig& config,
                                                    const LayerDims& dims, bool bias,
                                                    bool sequence_lens, bool initial_h,
                                                    const Dims& y_dims, const Dims& state_dims);

}  // namespace nxrt::cpu
