// Image sampling and rearrangement: GridSample (opset 16's 4-D form with
// bilinear/bicubic names, and the N-D form of 20+ with linear/cubic; zeros,
// border and reflection padding), AffineGrid (2-D and 3-D), RoiAlign (avg
// and max, both coordinate transformation modes), Col2Im (N-D) and
// CenterCropPad. Coordinates and interpolation weights are in double.
#include <cblas.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "cpu_kernel.hpp"

namespace nxrt::cpu {
namespace {

// The floating dtypes these kernels read coordinates from and sample.
using SampleTypes = TypeList<float, double, Float16, BFloat16>;

template <typename T>
double AsDouble(T v) {
  return static_cast<double>(static_cast<ComputeType<T>>(v));
}

template <typename T>
T FromDouble(double v) {
  return static_cast<T>(static_cast<ComputeType<T>>(v));
}

// The values of a floating tensor as double.
std::vector<double> ReadDoubles(const nxrt_tensor& t, const std::string& what) {
  std::vector<double> values(ElementCount(t));
  Dispatch(SampleTypes{}, t.dtype, what, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = DataAs<T>(t);
    for (size_t i = 0; i < values.size(); ++i) values[i] = AsDouble(src[i]);
  });
  return values;
}

enum class Interpolation { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

// Folds x back into [lo, hi] by reflecting at the borders as often as needed.
double Reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x >= lo && x <= hi) return x;
  // Two folds bring x back to where it started, so only the remainder of
  // `beyond` modulo two ranges matters, however far out x lies.
  const double beyond = std::fmod(x < lo ? lo - x : x - hi, 2 * range);
  const bool folds_even = beyond < range;
  const double rest = folds_even ? beyond : beyond - range;
  const bool toward_hi = (x < lo) == folds_even;
  return toward_hi ? lo + rest : hi - rest;
}

// Keys' cubic convolution weights (a = -0.75) of the four taps around a
// point at fraction t past the second one.
std::array<double, 4> CubicWeights(double t) {
  constexpr double a = -0.75;
  auto near = [](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };
  auto far = [](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

constexpr int64_t kMaxSpatialAxes = 8;

class GridSampleKernel : public CpuKernel {
 public:
  GridSampleKernel(Interpolation mode, Padding padding, bool align_corners)
      : CpuKernel(false), mode_(mode), padding_(padding), align_corners_(align_corners) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const Dims dims = DimsOf(x);
    const Dims grid_dims = DimsOf(inputs[1].tensor);
    const auto spatial = static_cast<int64_t>(dims.size()) - 2;
    if (spatial < 1 || grid_dims.size() != dims.size() || grid_dims[0] != dims[0] ||
        grid_dims.back() != spatial) {
      FailInvalid("GridSample: X " + DimsText(dims) + " and grid " + DimsText(grid_dims) +
                  " do not match");
    }
    if (spatial > kMaxSpatialAxes) {
      FailUnsupported("GridSample: more than " + std::to_string(kMaxSpatialAxes) +
                      " spatial axes not implemented");
    }
    const std::vector<double> grid = ReadDoubles(inputs[1].tensor, "GridSample grid");
    Dims out_dims{dims[0], dims[1]};
    out_dims.insert(out_dims.end(), grid_dims.begin() + 1, grid_dims.end() - 1);
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, x.dtype, out_dims);
    const Dims in_spatial(dims.begin() + 2, dims.end());
    const Dims in_strides = StridesOf(in_spatial);
    const int64_t in_points = ElementCount(in_spatial);
    const int64_t out_points = ElementCount(std::span(out_dims).subspan(2));
    const int64_t channels = dims[1];

    // Per spatial axis, the taps of one output point: input index (-1 for a
    // zero) and weight.
    std::vector<std::vector<std::pair<int64_t, double>>> taps(spatial);
    Dispatch(SampleTypes{}, x.dtype, "GridSample", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = DataAs<T>(x);
      T* dst = MutableDataAs<T>(out);
      for (int64_t n = 0; n < dims[0]; ++n) {
        for (int64_t p = 0; p < out_points; ++p) {
          const double* g = grid.data() + (n * out_points + p) * spatial;
          for (int64_t d = 0; d < spatial; ++d) {
            // The grid's last axis lists the innermost spatial axis first.
            Taps(g[spatial - 1 - d], in_spatial[d], taps[d]);
          }
          for (int64_t c = 0; c < channels; ++c) {
            const T* plane = src + (n * channels + c) * in_points;
            dst[(n * channels + c) * out_points + p] =
                FromDouble<T>(Gather(plane, taps, in_strides));
          }
        }
      }
    });
  }

 private:
  void Taps(double normalized, int64_t size, std::vector<std::pair<int64_t, double>>& taps) const {
    const auto extent = static_cast<double>(size);
    double v =
        align_corners_ ? (normalized + 1) / 2 * (extent - 1) : ((normalized + 1) * extent - 1) / 2;
    // Ties go to even, as in the ONNX reference.
    if (mode_ == Interpolation::kNearest) v = std::nearbyint(v);
    const double lo = align_corners_ ? 0.0 : -0.5;
    const double hi = align_corners_ ? extent - 1 : extent - 0.5;
    if (v < lo || v > hi) {
      if (padding_ == Padding::kBorder) v = std::clamp(v, 0.0, extent - 1);
      if (padding_ == Padding::kReflection) v = Reflect(v, lo, hi);
    }
    auto resolve = [&](int64_t i) -> int64_t {
      if (i >= 0 && i < size) return i;
      if (padding_ == Padding::kZeros) return -1;
      if (padding_ == Padding::kBorder) return std::clamp<int64_t>(i, 0, size - 1);
      return std::clamp<int64_t>(static_cast<int64_t>(Reflect(static_cast<double>(i), lo, hi)), 0,
                                 size - 1);
    };
    taps.clear();
    if (mode_ == Interpolation::kNearest) {
      taps.emplace_back(resolve(SaturatingCast<int64_t>(v)), 1.0);
      return;
    }
    const double base = std::floor(v);
    const double t = v - base;
    const auto i0 = SaturatingCast<int64_t>(base);
    if (mode_ == Interpolation::kLinear) {
      taps.emplace_back(resolve(i0), 1.0 - t);
      taps.emplace_back(resolve(i0 + 1), t);
      return;
    }
    const std::array<double, 4> w = CubicWeights(t);
    for (int k = 0; k < 4; ++k) taps.emplace_back(resolve(i0 - 1 + k), w[k]);
  }

  // The weighted sum over every combination of the axes' taps.
  template <typename T>
  static double Gather(const T* plane,
                       const std::vector<std::vector<std::pair<int64_t, double>>>& taps,
                       const Dims& strides) {
    const size_t axes = taps.size();
    std::array<size_t, kMaxSpatialAxes> at{};
    double sum = 0;
    while (true) {
      double w = 1;
      int64_t offset = 0;
      for (size_t d = 0; d < axes && offset >= 0; ++d) {
        const auto& [index, weight] = taps[d][at[d]];
        w *= weight;
        offset = index < 0 ? -1 : offset + index * strides[d];
      }
      if (offset >= 0) sum += w * AsDouble(plane[offset]);
      size_t d = axes;
      while (d > 0 && ++at[d - 1] == taps[d - 1].size()) at[--d] = 0;
      if (d == 0) return sum;
    }
  }

  Interpolation mode_;
  Padding padding_;
  bool align_corners_;
};

class AffineGridKernel : public CpuKernel {
 public:
  explicit AffineGridKernel(bool align_corners) : CpuKernel(false), align_corners_(align_corners) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& theta_tensor = inputs[0].tensor;
    const Dims theta_dims = DimsOf(theta_tensor);
    const Dims size = ReadInt64s(inputs[1].tensor);
    const auto spatial = static_cast<int64_t>(size.size()) - 2;
    if ((spatial != 2 && spatial != 3) || theta_dims.size() != 3 || theta_dims[0] != size[0] ||
        theta_dims[1] != spatial || theta_dims[2] != spatial + 1) {
      FailInvalid("AffineGrid: theta " + DimsText(theta_dims) + " does not fit size " +
                  DimsText(size));
    }
    const Dims extents(size.begin() + 2, size.end());  // [D,] H, W
    Dims out_dims{size[0]};
    out_dims.insert(out_dims.end(), extents.begin(), extents.end());
    out_dims.push_back(spatial);
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, theta_tensor.dtype, out_dims);

    // The homogeneous base grid, one row (x, y[, z], 1) per output point.
    const int64_t points = ElementCount(extents);
    const int64_t cols = spatial + 1;
    std::vector<double> base(points * cols, 1.0);
    const Dims strides = StridesOf(extents);
    for (int64_t p = 0; p < points; ++p) {
      for (int64_t d = 0; d < spatial; ++d) {
        const int64_t i = (p / strides[d]) % extents[d];
        base[p * cols + (spatial - 1 - d)] = Linspace(i, extents[d]);
      }
    }
    const std::vector<double> theta = ReadDoubles(theta_tensor, "AffineGrid");
    std::vector<double> grid(points * spatial);
    Dispatch(SampleTypes{}, theta_tensor.dtype, "AffineGrid", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* dst = MutableDataAs<T>(out);
      for (int64_t n = 0; n < size[0]; ++n) {
        // grid[points, spatial] = base[points, cols] * theta_n^T
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(points),
                    static_cast<int>(spatial), static_cast<int>(cols), 1.0, base.data(),
                    static_cast<int>(cols), theta.data() + n * spatial * cols,
                    static_cast<int>(cols), 0.0, grid.data(), static_cast<int>(spatial));
        for (size_t i = 0; i < grid.size(); ++i) dst[n * grid.size() + i] = FromDouble<T>(grid[i]);
      }
    });
  }

 private:
  // The normalized coordinate of index i of an axis of n points in [-1, 1].
  double Linspace(int64_t i, int64_t n) const {
    const auto x = static_cast<double>(i);
    const auto extent = static_cast<double>(n);
    if (align_corners_) return n == 1 ? -1.0 : -1.0 + 2.0 * x / (extent - 1);
    return (2.0 * x + 1.0) / extent - 1.0;
  }

  bool align_corners_;
};

struct RoiAlignAttributes {
  bool max_mode = false;
  bool half_pixel = false;
  int64_t height = 1;
  int64_t width = 1;
  int64_t sampling_ratio = 0;
  double spatial_scale = 1.0;
};

// One sample point of a RoiAlign bin: its four bilinear corners (offsets in
// the plane) and their weights; all weights zero when it lies off the map.
struct RoiSample {
  std::array<int64_t, 4> at{};
  std::array<double, 4> weight{};
};

RoiSample BilinearSample(double y, double x, int64_t h, int64_t w) {
  RoiSample s;
  if (y < -1.0 || y > static_cast<double>(h) || x < -1.0 || x > static_cast<double>(w)) return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  auto y_low = static_cast<int64_t>(y);
  auto x_low = static_cast<int64_t>(x);
  int64_t y_high = y_low + 1;
  int64_t x_high = x_low + 1;
  if (y_low >= h - 1) {
    y_low = y_high = h - 1;
    y = static_cast<double>(y_low);
  }
  if (x_low >= w - 1) {
    x_low = x_high = w - 1;
    x = static_cast<double>(x_low);
  }
  const double ly = y - static_cast<double>(y_low);
  const double lx = x - static_cast<double>(x_low);
  s.at = {y_low * w + x_low, y_low * w + x_high, y_high * w + x_low, y_high * w + x_high};
  s.weight = {(1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx};
  return s;
}

class RoiAlignKernel : public CpuKernel {
 public:
  explicit RoiAlignKernel(RoiAlignAttributes a) : CpuKernel(false), a_(a) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const Dims dims = DimsOf(x);
    const Dims roi_dims = DimsOf(inputs[1].tensor);
    const std::vector<int64_t> batch = ReadInt64s(inputs[2].tensor);
    if (dims.size() != 4 || roi_dims.size() != 2 || roi_dims[1] != 4 ||
        roi_dims[0] != static_cast<int64_t>(batch.size())) {
      FailInvalid("RoiAlign: X must be [N,C,H,W], rois [R,4] and batch_indices [R]");
    }
    const std::vector<double> rois = ReadDoubles(inputs[1].tensor, "RoiAlign rois");
    const int64_t channels = dims[1];
    const int64_t h = dims[2];
    const int64_t w = dims[3];
    const int64_t bins = a_.height * a_.width;
    nxrt_tensor& out =
        PrepareOutput(ctx, outputs, 0, x.dtype, Dims{roi_dims[0], channels, a_.height, a_.width});
    std::vector<RoiSample> samples;
    Dispatch(SampleTypes{}, x.dtype, "RoiAlign", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = DataAs<T>(x);
      T* dst = MutableDataAs<T>(out);
      for (int64_t r = 0; r < roi_dims[0]; ++r) {
        if (batch[r] < 0 || batch[r] >= dims[0]) FailInvalid("RoiAlign: batch index out of range");
        const int64_t per_bin = Samples(rois.data() + r * 4, h, w, samples);
        for (int64_t c = 0; c < channels; ++c) {
          const T* plane = src + (batch[r] * channels + c) * h * w;
          T* y = dst + (r * channels + c) * bins;
          for (int64_t bin = 0; bin < bins; ++bin) {
            double value = 0;
            for (int64_t k = 0; k < per_bin; ++k) {
              const RoiSample& s = samples[bin * per_bin + k];
              if (a_.max_mode) {
                // The largest weighted corner, as the ONNX definition has it.
                double m = s.weight[0] * AsDouble(plane[s.at[0]]);
                for (int t = 1; t < 4; ++t) m = std::max(m, s.weight[t] * AsDouble(plane[s.at[t]]));
                value = k == 0 ? m : std::max(value, m);
              } else {
                for (int t = 0; t < 4; ++t) value += s.weight[t] * AsDouble(plane[s.at[t]]);
              }
            }
            if (!a_.max_mode) value /= static_cast<double>(std::max<int64_t>(per_bin, 1));
            y[bin] = FromDouble<T>(value);
          }
        }
      }
    });
  }

 private:
  // The sample points of every bin of one box, bin by bin; returns how many
  // each bin has.
  int64_t Samples(const double* roi, int64_t h, int64_t w, std::vector<RoiSample>& samples) const {
    const double offset = a_.half_pixel ? 0.5 : 0.0;
    const double x0 = roi[0] * a_.spatial_scale - offset;
    const double y0 = roi[1] * a_.spatial_scale - offset;
    double roi_w = roi[2] * a_.spatial_scale - offset - x0;
    double roi_h = roi[3] * a_.spatial_scale - offset - y0;
    if (!a_.half_pixel) {
      // Malformed boxes count as 1x1.
      roi_w = std::max(roi_w, 1.0);
      roi_h = std::max(roi_h, 1.0);
    }
    const double bin_h = roi_h / static_cast<double>(a_.height);
    const double bin_w = roi_w / static_cast<double>(a_.width);
    const int64_t grid_h =
        a_.sampling_ratio > 0 ? a_.sampling_ratio : SaturatingCast<int64_t>(std::ceil(bin_h));
    const int64_t grid_w =
        a_.sampling_ratio > 0 ? a_.sampling_ratio : SaturatingCast<int64_t>(std::ceil(bin_w));
    samples.clear();
    for (int64_t ph = 0; ph < a_.height; ++ph) {
      for (int64_t pw = 0; pw < a_.width; ++pw) {
        for (int64_t iy = 0; iy < grid_h; ++iy) {
          const double sy = y0 + static_cast<double>(ph) * bin_h +
                            (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
          for (int64_t ix = 0; ix < grid_w; ++ix) {
            const double sx = x0 + static_cast<double>(pw) * bin_w +
                              (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w);
            samples.push_back(BilinearSample(sy, sx, h, w));
          }
        }
      }
    }
    return grid_h * grid_w;
  }

  RoiAlignAttributes a_;
};

// Col2Im: sums each column of sliding blocks back into the image it was cut
// from, over any number of spatial axes.
class Col2ImKernel : public CpuKernel {
 public:
  Col2ImKernel(Dims dilations, Dims pads, Dims strides)
      : CpuKernel(false),
        dilations_(std::move(dilations)),
        pads_(std::move(pads)),
        strides_(std::move(strides)) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const Dims dims = DimsOf(x);
    const Dims image = ReadInt64s(inputs[1].tensor);
    const Dims block = ReadInt64s(inputs[2].tensor);
    const size_t axes = image.size();
    const Dims dilations = dilations_.empty() ? Dims(axes, 1) : dilations_;
    const Dims strides = strides_.empty() ? Dims(axes, 1) : strides_;
    const Dims pads = pads_.empty() ? Dims(2 * axes, 0) : pads_;
    if (dims.size() != 3 || block.size() != axes || dilations.size() != axes ||
        strides.size() != axes || pads.size() != 2 * axes) {
      FailInvalid("Col2Im: input, image_shape, block_shape and attributes do not agree");
    }
    const int64_t block_size = ElementCount(block);
    if (block_size < 1 || dims[1] % block_size != 0) {
      FailInvalid("Col2Im: input axis 1 is not a multiple of the block size");
    }
    Dims blocks(axes);  // sliding block positions per axis
    for (size_t d = 0; d < axes; ++d) {
      blocks[d] =
          (image[d] + pads[d] + pads[axes + d] - dilations[d] * (block[d] - 1) - 1) / strides[d] +
          1;
    }
    if (ElementCount(blocks) != dims[2]) {
      FailInvalid("Col2Im: input axis 2 is not the number of sliding blocks " + DimsText(blocks));
    }
    const int64_t channels = dims[1] / block_size;
    Dims out_dims{dims[0], channels};
    out_dims.insert(out_dims.end(), image.begin(), image.end());
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, x.dtype, out_dims);
    const int64_t image_size = ElementCount(image);
    const int64_t positions = dims[2];
    const Dims image_strides = StridesOf(image);
    const Dims block_strides = StridesOf(block);
    const Dims position_strides = StridesOf(blocks);
    // Per (block offset, position): the image offset it adds into, or -1 in
    // the padding.
    std::vector<int64_t> target(block_size * positions);
    for (int64_t k = 0; k < block_size; ++k) {
      for (int64_t p = 0; p < positions; ++p) {
        int64_t offset = 0;
        for (size_t d = 0; d < axes && offset >= 0; ++d) {
          const int64_t i = ((p / position_strides[d]) % blocks[d]) * strides[d] - pads[d] +
                            ((k / block_strides[d]) % block[d]) * dilations[d];
          offset = i < 0 || i >= image[d] ? -1 : offset + i * image_strides[d];
        }
        target[k * positions + p] = offset;
      }
    }
    Dispatch(NumericTypes{}, x.dtype, "Col2Im", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const T* src = DataAs<T>(x);
      T* dst = MutableDataAs<T>(out);
      std::vector<C> sum(image_size);
      for (int64_t plane = 0; plane < dims[0] * channels; ++plane) {
        std::fill(sum.begin(), sum.end(), C{});
        const T* column = src + plane * block_size * positions;
        for (int64_t j = 0; j < block_size * positions; ++j) {
          if (target[j] >= 0) sum[target[j]] += static_cast<C>(column[j]);
        }
        for (int64_t i = 0; i < image_size; ++i)
          dst[plane * image_size + i] = static_cast<T>(sum[i]);
      }
    });
  }

 private:
  Dims dilations_;
  Dims pads_;
  Dims strides_;
};

// CenterCropPad: crops or zero-pads each chosen axis to its new extent,
// centred; an odd difference puts the extra element at the end.
class CenterCropPadKernel : public CpuKernel {
 public:
  explicit CenterCropPadKernel(Dims axes) : CpuKernel(false), axes_(std::move(axes)) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const Dims dims = DimsOf(x);
    const auto rank = static_cast<int64_t>(dims.size());
    const Dims shape = ReadInt64s(inputs[1].tensor);
    Dims axes = axes_;
    if (axes.empty()) {
      for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    }
    if (shape.size() != axes.size()) FailInvalid("CenterCropPad: shape and axes differ in length");
    Dims out_dims = dims;
    for (size_t i = 0; i < axes.size(); ++i) {
      if (shape[i] < 0) FailInvalid("CenterCropPad: negative extent");
      out_dims[NormalizeAxis(axes[i], rank, "CenterCropPad axes")] = shape[i];
    }
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, x.dtype, out_dims);
    const size_t element = ElementSize(x.dtype);
    std::memset(out.data, 0, ElementCount(out_dims) * element);
    if (rank == 0) {
      std::memcpy(out.data, x.data, element);
      return;
    }
    // The kept block: its extent and where it starts in the input and output.
    Dims extent(rank), in_start(rank), out_start(rank);
    for (int64_t d = 0; d < rank; ++d) {
      extent[d] = std::min(dims[d], out_dims[d]);
      in_start[d] = dims[d] > out_dims[d] ? (dims[d] - out_dims[d]) / 2 : 0;
      out_start[d] = out_dims[d] > dims[d] ? (out_dims[d] - dims[d]) / 2 : 0;
    }
    if (ElementCount(extent) == 0) return;
    const Dims in_strides = StridesOf(dims);
    const Dims out_strides = StridesOf(out_dims);
    const auto* src = static_cast<const std::byte*>(x.data);
    auto* dst = static_cast<std::byte*>(out.data);
    const int64_t rows = ElementCount(std::span(extent).first(rank - 1));
    for (int64_t row = 0; row < rows; ++row) {
      int64_t in_offset = in_start[rank - 1];
      int64_t out_offset = out_start[rank - 1];
      for (int64_t d = rank - 2, rest = row; d >= 0; --d) {
        const int64_t i = rest % extent[d];
        rest /= extent[d];
        in_offset += (i + in_start[d]) * in_strides[d];
        out_offset += (i + out_start[d]) * out_strides[d];
      }
      std::memcpy(dst + out_offset * element, src + in_offset * element,
                  extent[rank - 1] * element);
    }
  }

 private:
  Dims axes_;
};

std::optional<Interpolation> ParseInterpolation(const std::string& mode, int64_t opset) {
  if (mode == "nearest") return Interpolation::kNearest;
  if (mode == (opset < 20 ? "bilinear" : "linear")) return Interpolation::kLinear;
  if (mode == (opset < 20 ? "bicubic" : "cubic")) return Interpolation::kCubic;
  return std::nullopt;
}

std::optional<Padding> ParsePadding(const std::string& padding) {
  if (padding == "zeros") return Padding::kZeros;
  if (padding == "border") return Padding::kBorder;
  if (padding == "reflection") return Padding::kReflection;
  return std::nullopt;
}

std::string DefaultGridMode(int64_t opset) {
  return opset < 20 ? "bilinear" : "linear";
}

}  // namespace

void RegisterImageOps(OpRegistry& r) {
  r.Add("GridSample",
        {16,
         [](const sdk::Node& node, int64_t opset, std::span<const nxrt_value_info> inputs) {
           const std::string mode = node.AttrString("mode", DefaultGridMode(opset));
           const std::string padding = node.AttrString("padding_mode", "zeros");
           if (!ParseInterpolation(mode, opset)) {
             return sdk::ClaimResult::Declined("GridSample: mode=" + mode +
                                               " is not a mode of opset " + std::to_string(opset));
           }
           if (!ParsePadding(padding)) {
             return sdk::ClaimResult::Declined("GridSample: padding_mode=" + padding +
                                               " not implemented");
           }
           if (auto reason = CheckInputDtype(node, inputs, 0, SampleTypes{})) {
             return ClaimUnless(reason);
           }
           return ClaimUnless(CheckInputDtype(node, inputs, 1, SampleTypes{}));
         },
         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t opset) {
           return std::make_unique<GridSampleKernel>(
               *ParseInterpolation(node.AttrString("mode", DefaultGridMode(opset)), opset),
               *ParsePadding(node.AttrString("padding_mode", "zeros")),
               node.AttrInt("align_corners", 0) != 0);
         }});
  r.Add("AffineGrid",
        {20,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           if (auto reason = CheckInputDtype(node, inputs, 0, SampleTypes{})) {
             return ClaimUnless(reason);
           }
           return ClaimUnless(CheckInputDtype(node, inputs, 1, IndexTypes{}));
         },
         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
           return std::make_unique<AffineGridKernel>(node.AttrInt("align_corners", 0) != 0);
         }});
  r.Add("RoiAlign",
        {10,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           const std::string mode = node.AttrString("mode", "avg");
           const std::string transform =
               node.AttrString("coordinate_transformation_mode", "half_pixel");
           if (mode != "avg" && mode != "max") {
             return sdk::ClaimResult::Declined("RoiAlign: mode=" + mode + " not implemented");
           }
           if (transform != "half_pixel" && transform != "output_half_pixel") {
             return sdk::ClaimResult::Declined(
                 "RoiAlign: coordinate_transformation_mode=" + transform + " not implemented");
           }
           for (size_t i = 0; i < 2; ++i) {
             if (auto reason = CheckInputDtype(node, inputs, i, SampleTypes{})) {
               return ClaimUnless(reason);
             }
           }
           return ClaimUnless(CheckInputDtype(node, inputs, 2, IndexTypes{}));
         },
         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t opset) {
           RoiAlignAttributes a;
           a.max_mode = node.AttrString("mode", "avg") == "max";
           // Before opset 16 boxes had no half-pixel shift.
           a.half_pixel = opset >= 16 && node.AttrString("coordinate_transformation_mode",
                                                         "half_pixel") == "half_pixel";
           a.height = node.AttrInt("output_height", 1);
           a.width = node.AttrInt("output_width", 1);
           a.sampling_ratio = node.AttrInt("sampling_ratio", 0);
           a.spatial_scale = node.AttrFloat("spatial_scale", 1.0f);
           return std::make_unique<RoiAlignKernel>(a);
         }});
  r.Add("Col2Im", {18,
                   [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
                     return ClaimUnless(CheckInputDtype(node, inputs, 0, NumericTypes{}));
                   },
                   [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
                     return std::make_unique<Col2ImKernel>(node.AttrInts("dilations"),
                                                           node.AttrInts("pads"),
                                                           node.AttrInts("strides"));
                   }});
  r.Add("CenterCropPad",
        {18,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           return ClaimUnless(CheckInputDtype(node, inputs, 0, AllTypes{}));
         },
         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
           return std::make_unique<CenterCropPadKernel>(node.AttrInts("axes"));
         }});
}

}  // namespace nxrt::cpu
