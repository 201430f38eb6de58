// DeformConv (opset 19), 2-D: a Conv whose every kernel tap is moved by a
// learned (dy, dx) offset per output position (shared by the channels of one
// offset group) and optionally scaled by a mask. Each image and group is
// lowered to deformed columns, sampled bilinearly with zeros outside the
// input grid, and one dgemm with the weights.
#include <cblas.h>

#include <cmath>

#include "cpu_kernel.hpp"
#include "window_geometry.hpp"

namespace nxrt::cpu {
namespace {

// Bilinear sample of a [h, w] plane at (y, x); 0 outside [0, h-1] x [0, w-1].
double Sample(const std::vector<double>& plane, int64_t base, int64_t h, int64_t w, double y,
              double x) {
  if (y < 0 || x < 0 || y > static_cast<double>(h - 1) || x > static_cast<double>(w - 1)) return 0;
  const auto y0 = SaturatingCast<int64_t>(std::floor(y));
  const auto x0 = SaturatingCast<int64_t>(std::floor(x));
  const int64_t y1 = std::min(y0 + 1, h - 1), x1 = std::min(x0 + 1, w - 1);
  const double fy = y - static_cast<double>(y0), fx = x - static_cast<double>(x0);
  auto at = [&](int64_t r, int64_t c) { return plane[base + r * w + c]; };
  return (1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x1)) +
         fy * ((1 - fx) * at(y1, x0) + fx * at(y1, x1));
}

class DeformConvKernel : public CpuKernel {
 public:
  DeformConvKernel(const sdk::Node& node, std::span<const nxrt_shape> inputs)
      : CpuKernel(false),
        group_(node.AttrInt("group", 1)),
        offset_group_(node.AttrInt("offset_group", 1)) {
    const Dims x(inputs[0].dims, inputs[0].dims + inputs[0].rank);
    const Dims w(inputs[1].dims, inputs[1].dims + inputs[1].rank);
    if (x.size() != 4 || w.size() != 4) FailUnsupported("DeformConv: only 2-D is implemented");
    geometry_ = ResolveWindow(WindowAttributes::Read(node), Dims(x.begin() + 2, x.end()),
                              Dims(w.begin() + 2, w.end()), "DeformConv");
    if (group_ <= 0 || offset_group_ <= 0 || x[1] % group_ != 0 || w[0] % group_ != 0 ||
        w[1] * group_ != x[1] || x[1] % offset_group_ != 0) {
      FailInvalid("DeformConv: channels do not split into groups");
    }
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& xt = inputs[0].tensor;
    const nxrt_tensor& wt = inputs[1].tensor;
    const int64_t batch = xt.dims[0], channels = xt.dims[1], h = xt.dims[2], w = xt.dims[3];
    const int64_t maps = wt.dims[0], kh = wt.dims[2], kw = wt.dims[3];
    const int64_t oh = geometry_.out[0], ow = geometry_.out[1];
    const int64_t taps = kh * kw, positions = oh * ow;
    const Dims out_dims{batch, maps, oh, ow};
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, xt.dtype, out_dims);
    const std::vector<double> x = Values(xt), weights = Values(wt);
    const std::vector<double> offset = Values(inputs[2].tensor);
    const bool has_bias = IsPresent(inputs, 3), has_mask = IsPresent(inputs, 4);
    const std::vector<double> bias = has_bias ? Values(inputs[3].tensor) : std::vector<double>{};
    const std::vector<double> mask = has_mask ? Values(inputs[4].tensor) : std::vector<double>{};
    if (static_cast<int64_t>(offset.size()) != batch * offset_group_ * 2 * taps * positions ||
        (has_mask &&
         static_cast<int64_t>(mask.size()) != batch * offset_group_ * taps * positions)) {
      FailInvalid("DeformConv: offset or mask does not match the output positions");
    }
    if (has_bias && static_cast<int64_t>(bias.size()) != maps) {
      FailInvalid("DeformConv: the bias holds " + std::to_string(bias.size()) + " values for " +
                  std::to_string(maps) + " output channels; give one per output channel");
    }
    const int64_t group_channels = channels / group_, group_maps = maps / group_;
    const int64_t channels_per_offset = channels / offset_group_;
    const int64_t rows = group_channels * taps;
    std::vector<double> columns(rows * positions), y(batch * maps * positions);
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t g = 0; g < group_; ++g) {
        for (int64_t cg = 0; cg < group_channels; ++cg) {
          const int64_t c = g * group_channels + cg;
          const int64_t og = c / channels_per_offset;
          for (int64_t i = 0; i < kh; ++i) {
            for (int64_t j = 0; j < kw; ++j) {
              const int64_t tap = i * kw + j;
              const int64_t offset_base =
                  ((n * offset_group_ + og) * 2 * taps + 2 * tap) * positions;
              const int64_t mask_base = ((n * offset_group_ + og) * taps + tap) * positions;
              for (int64_t p = 0; p < positions; ++p) {
                const int64_t r = p / ow, q = p % ow;
                const double sy =
                    static_cast<double>(r * geometry_.strides[0] - geometry_.pad_begin[0] +
                                        i * geometry_.dilations[0]) +
                    offset[offset_base + p];
                const double sx =
                    static_cast<double>(q * geometry_.strides[1] - geometry_.pad_begin[1] +
                                        j * geometry_.dilations[1]) +
                    offset[offset_base + positions + p];
                double v = Sample(x, (n * channels + c) * h * w, h, w, sy, sx);
                if (has_mask) v *= mask[mask_base + p];
                columns[(cg * taps + tap) * positions + p] = v;
              }
            }
          }
        }
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(group_maps),
                    static_cast<int>(positions), static_cast<int>(rows), 1.0,
                    weights.data() + g * group_maps * rows, static_cast<int>(rows), columns.data(),
                    static_cast<int>(positions), 0.0,
                    y.data() + (n * maps + g * group_maps) * positions,
                    static_cast<int>(positions));
      }
    }
    Dispatch(FloatTypes{}, xt.dtype, "DeformConv", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* py = MutableDataAs<T>(out);
      for (size_t i = 0; i < y.size(); ++i) {
        const double b = has_bias ? bias[(static_cast<int64_t>(i) / positions) % maps] : 0.0;
        py[i] = static_cast<T>(static_cast<ComputeType<T>>(y[i] + b));
      }
    });
  }

 private:
  static std::vector<double> Values(const nxrt_tensor& t) {
    std::vector<double> v(ElementCount(t));
    Dispatch(FloatTypes{}, t.dtype, "DeformConv", [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<double>(static_cast<ComputeType<T>>(DataAs<T>(t)[i]));
      }
    });
    return v;
  }

  int64_t group_;
  int64_t offset_group_;
  WindowGeometry geometry_;
};

}  // namespace

void RegisterDeformConvOps(OpRegistry& r) {
  r.Add("DeformConv", {19,
                       [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
                         if (inputs.size() > 1 && inputs[1].rank != 4) {
                           return sdk::ClaimResult::Declined("DeformConv: only 2-D is implemented");
                         }
                         return ClaimUnless(CheckInputDtype(node, inputs, 0, FloatTypes{}));
                       },
                       [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
                         return std::make_unique<DeformConvKernel>(node, inputs);
                       }});
}

}  // namespace nxrt::cpu
