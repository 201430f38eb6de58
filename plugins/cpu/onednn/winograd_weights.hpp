// Constant 3x3 weights transformed into the Winograd layouts oneDNN's
// AVX-512 float kernels read (wino_wei_aaOio and wino_wei_aaOBiOo for
// F(2x2,3x3), wino_wei_OBaaIBOIio for F(4x4,3x3)). oneDNN's own reorder into them is a
// scalar loop that reads W one strided value at a time: 60 ms for one
// 512x512 layer, most of a ResNet's first run. Here each block of output
// maps is transformed with vectors, U = G g G^T filter by filter, in the
// same order of operations, so the bytes equal oneDNN's, and written in
// runs of the layout's output-map block.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

namespace nxrt::cpu::onednn {

// Writes `weights`, plain [maps, channels, 3, 3] float as `given` says, into
// `out` laid out as `preferred` (its get_size() bytes). Returns false,
// writing nothing, when `given` is not such a tensor or `preferred` not one
// of the three layouts above; the caller then reorders through oneDNN.
bool TransformWinogradWeights(const dnnl::memory::desc& given, const float* weights,
                              const dnnl::memory::desc& preferred, void* out);

}  // namespace nxrt::cpu::onednn
