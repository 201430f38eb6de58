// A transposed convolution whose windows tile its output without overlap:
// strides equal to the kernel, no dilation, no padding, one or two spatial
// axes. Each input position then owns its own kh x kw patch of every map,
// so the op is one product per image and group,
//   patches[(m, a, b), p] = sum over c of W[c, m, a, b] · X[c, p]
// and a scatter of each patch row to its place, the bias added on the way.
// Segmentation heads upsample so (2x2, stride 2); oneDNN's deconvolution
// pads their few output maps to sixteen and reorders both images around
// it, ten times this form's cost on PP-OCR's 24-to-1-map head.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "window_geometry.hpp"

namespace nxrt::cpu {

class PatchConvTranspose {
 public:
  struct Shape {
    int64_t batch, channels, maps, group;
    // In the forward convolution's terms, as ConvTranspose keeps it: `out`
    // is the transposed op's input, `in` its output.
    const WindowGeometry& geometry;
  };

  // The plan for `shape`, or nullopt when its windows overlap, leave gaps
  // or are padded, or it has more than two spatial axes.
  static std::optional<PatchConvTranspose> Plan(const Shape& shape);

  // y = ConvTranspose(x, w) + bias for float32 images in NCHW (or NCW);
  // `bias` (one per map) may be null. Runs its products on `threads`.
  void Run(const float* x, const float* w, const float* bias, float* y, int threads);

 private:
  PatchConvTranspose() = default;

  int64_t batch_ = 0, channels_ = 0, maps_ = 0, group_ = 0;
  int64_t height_ = 0, width_ = 0;  // of the input
  int64_t kh_ = 0, kw_ = 0;
  std::vector<float> patches_;  // one group's product
};

}  // namespace nxrt::cpu
