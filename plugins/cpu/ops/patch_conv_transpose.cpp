#include "ops/patch_conv_transpose.hpp"

#include <algorithm>

#include "onednn/sgemm.hpp"
#include "parallel_blocks.hpp"

namespace nxrt::cpu {
namespace {

// One output row from the kw patch rows of one kernel row, `stride` apart:
// row[j * kw + b] = source[b * stride + j] + bias for j < width.
template <int kKw>
void InterleaveRow(const float* source, int64_t stride, int64_t width, float bias, float* row) {
  for (int64_t j = 0; j < width; ++j) {
#pragma GCC unroll 4
    for (int b = 0; b < kKw; ++b) row[j * kKw + b] = source[b * stride + j] + bias;
  }
}

void InterleaveRow(const float* source, int64_t stride, int64_t width, int64_t kw, float bias,
                   float* row) {
  switch (kw) {
    case 1:
      return InterleaveRow<1>(source, stride, width, bias, row);
    case 2:
      return InterleaveRow<2>(source, stride, width, bias, row);
    case 4:
      return InterleaveRow<4>(source, stride, width, bias, row);
    default:
      for (int64_t j = 0; j < width; ++j) {
        for (int64_t b = 0; b < kw; ++b) row[j * kw + b] = source[b * stride + j] + bias;
      }
  }
}

}  // namespace

std::optional<PatchConvTranspose> PatchConvTranspose::Plan(const Shape& shape) {
  const WindowGeometry& g = shape.geometry;
  const size_t rank = g.kernel.size();
  if (rank < 1 || rank > 2 || shape.group < 1) return std::nullopt;
  for (size_t i = 0; i < rank; ++i) {
    if (g.strides[i] != g.kernel[i] || g.dilations[i] != 1 || g.pad_begin[i] != 0 ||
        g.pad_end[i] != 0 || g.in[i] != g.out[i] * g.kernel[i]) {
      return std::nullopt;
    }
  }
  PatchConvTranspose plan;
  plan.batch_ = shape.batch;
  plan.channels_ = shape.channels;
  plan.maps_ = shape.maps;
  plan.group_ = shape.group;
  plan.height_ = rank == 2 ? g.out[0] : 1;
  plan.width_ = g.out[rank - 1];
  plan.kh_ = rank == 2 ? g.kernel[0] : 1;
  plan.kw_ = g.kernel[rank - 1];
  plan.patches_.resize(shape.maps / shape.group * plan.kh_ * plan.kw_ * plan.height_ * plan.width_);
  return plan;
}

void PatchConvTranspose::Run(const float* x, const float* w, const float* bias, float* y,
                             int threads) {
  const int64_t positions = height_ * width_;
  const int64_t group_channels = channels_ / group_, group_maps = maps_ / group_;
  const int64_t patch_rows = group_maps * kh_ * kw_;
  const int64_t plane = positions * kh_ * kw_;
  for (int64_t n = 0; n < batch_; ++n) {
    for (int64_t g = 0; g < group_; ++g) {
      // W's group is [group_channels, patch_rows]: its transpose meets X's.
      onednn::Sgemm(true, false, patch_rows, positions, group_channels, 1.0f,
                    w + g * group_channels * patch_rows, patch_rows,
                    x + (n * channels_ + g * group_channels) * positions, positions, 0.0f,
                    patches_.data(), positions, threads);
      const auto scatter = [&](int64_t m) {
        const int64_t map = g * group_maps + m;
        float* image = y + (n * maps_ + map) * plane;
        const float add = bias ? bias[map] : 0.0f;
        for (int64_t i = 0; i < height_; ++i) {
          for (int64_t a = 0; a < kh_; ++a) {
            const float* source = patches_.data() + (m * kh_ + a) * kw_ * positions + i * width_;
            InterleaveRow(source, positions, width_, kw_, add,
                          image + (i * kh_ + a) * width_ * kw_);
          }
        }
      };
      const int blocks = static_cast<int>(std::min<int64_t>(threads, group_maps));
      if (blocks > 1) {
        RunBlocks(blocks, [&](int block) {
          for (int64_t m = block; m < group_maps; m += blocks) scatter(m);
        });
      } else {
        for (int64_t m = 0; m < group_maps; ++m) scatter(m);
      }
    }
  }
}

}  // namespace nxrt::cpu
