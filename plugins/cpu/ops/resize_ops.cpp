// Resize (nearest, linear and cubic, with the coordinate transformation and
// nearest rounding modes of opset 11+ and half_pixel_symmetric of 19,
// tf_crop_and_resize with its roi and extrapolation value, and from opset 18
// antialias, axes and keep_aspect_ratio_policy) and the older Upsample.
// Nearest resampling is a gather of elements; interpolation is separable, so
// the tensor is resampled one axis at a time in double, and an antialiased
// downscale widens the linear or cubic filter by 1 / scale. Linear resizing
// of a float32 image's last two axes alone (how segmentation and detection
// heads upsample) reads each output's four neighbours in one pass in float.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "cpu_kernel.hpp"

namespace nxrt::cpu {
namespace {

enum class Mode { kNearest, kLinear, kCubic };

struct ResizeAttributes {
  Mode mode = Mode::kNearest;
  std::string transform = "half_pixel";
  std::string nearest = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation = 0;
  std::string keep_aspect = "stretch";
  std::vector<int64_t> axes;  // empty: every axis
};

// The part of an axis tf_crop_and_resize samples, as fractions of it.
struct Crop {
  double start = 0;
  double end = 1;
};

double SourceCoordinate(const ResizeAttributes& a, double x, double scale, int64_t in, int64_t out,
                        Crop crop) {
  const std::string& t = a.transform;
  if (t == "tf_crop_and_resize") {
    const double last = static_cast<double>(in - 1);
    if (out == 1) return 0.5 * (crop.start + crop.end) * last;
    return crop.start * last + x * (crop.end - crop.start) * last / static_cast<double>(out - 1);
  }
  if (t == "asymmetric") return x / scale;
  if (t == "align_corners") {
    // ONNX measures the resized length as in * scale, before flooring.
    const double resized = static_cast<double>(in) * scale;
    return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / (resized - 1.0);
  }
  if (t == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (t == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (t == "half_pixel_symmetric") {
    // half_pixel about the centre of the input, for the floored output length.
    const double adjustment = static_cast<double>(out) / (scale * static_cast<double>(in));
    const double offset = static_cast<double>(in) / 2 * (1 - adjustment);
    return offset + (x + 0.5) / scale - 0.5;
  }
  return (x + 0.5) / scale - 0.5;  // half_pixel
}

// Saturated: a coordinate far outside the input (or NaN, from a NaN crop)
// is clamped to an edge by the caller.
int64_t NearestIndex(const std::string& rounding, double x) {
  if (rounding == "floor") return SaturatingCast<int64_t>(std::floor(x));
  if (rounding == "ceil") return SaturatingCast<int64_t>(std::ceil(x));
  const double f = std::floor(x);
  if (x - f == 0.5) return SaturatingCast<int64_t>(rounding == "round_prefer_ceil" ? f + 1 : f);
  return SaturatingCast<int64_t>(std::round(x));
}

double CubicWeight(double a, double d) {
  d = std::abs(d);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0.0;
}

// Resamples axis `axis` of `src` (dims) to `out_extent`, into `dst`.
void ResampleAxis(const ResizeAttributes& a, const std::vector<double>& src, const Dims& dims,
                  size_t axis, int64_t out_extent, double scale, Crop crop,
                  std::vector<double>& dst) {
  const int64_t in = dims[axis];
  int64_t outer = 1;
  for (size_t i = 0; i < axis; ++i) outer *= dims[i];
  int64_t inner = 1;
  for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
  dst.assign(outer * out_extent * inner, 0.0);
  // Per output position: source taps and weights, or none where
  // tf_crop_and_resize samples outside the input (the extrapolation value).
  std::vector<std::vector<std::pair<int64_t, double>>> taps(out_extent);
  std::vector<bool> outside(out_extent, false);
  for (int64_t x = 0; x < out_extent; ++x) {
    const double s = SourceCoordinate(a, static_cast<double>(x), scale, in, out_extent, crop);
    auto& t = taps[x];
    if (a.transform == "tf_crop_and_resize" && (s < 0 || s > static_cast<double>(in - 1))) {
      outside[x] = true;
    } else if (a.antialias && a.mode != Mode::kNearest && scale < 1) {
      // The filter stretched to 1 / scale input samples, edge samples
      // repeated, weights normalised.
      const double reach = (a.mode == Mode::kLinear ? 1.0 : 2.0) / scale;
      double total = 0;
      const auto first = SaturatingCast<int64_t>(std::floor(s - reach));
      const auto last = SaturatingCast<int64_t>(std::ceil(s + reach));
      for (int64_t j = first; j <= last && j >= first; ++j) {  // j >= first: no wrap at the end
        const double d = (static_cast<double>(j) - s) * scale;
        double w =
            a.mode == Mode::kLinear ? std::max(0.0, 1.0 - std::abs(d)) : CubicWeight(a.cubic_a, d);
        if (a.exclude_outside && (j < 0 || j >= in)) w = 0;
        if (w == 0) continue;
        t.push_back({std::clamp<int64_t>(j, 0, in - 1), w});
        total += w;
      }
      for (auto& [index, w] : t) w /= total;
    } else if (a.mode == Mode::kNearest) {
      t.push_back({std::clamp<int64_t>(NearestIndex(a.nearest, s), 0, in - 1), 1.0});
    } else if (a.mode == Mode::kLinear) {
      const double c = std::clamp(s, 0.0, static_cast<double>(in - 1));
      const auto x0 = SaturatingCast<int64_t>(std::floor(c));  // a NaN crop gives NaN
      const int64_t x1 = std::min(x0 + 1, in - 1);
      const double w = c - static_cast<double>(x0);
      t.push_back({x0, 1.0 - w});
      t.push_back({x1, w});
    } else {
      const double f = std::floor(s);
      const double r = s - f;
      double total = 0;
      for (int k = -1; k <= 2; ++k) {
        const int64_t index = SaturatingCast<int64_t>(f) + k;  // wraps, defined, at the ends
        double w = CubicWeight(a.cubic_a, static_cast<double>(k) - r);
        if (a.exclude_outside && (index < 0 || index >= in)) w = 0;
        t.push_back({std::clamp<int64_t>(index, 0, in - 1), w});
        total += w;
      }
      if (a.exclude_outside && total != 0) {
        for (auto& [index, w] : t) w /= total;
      }
    }
  }
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t x = 0; x < out_extent; ++x) {
      double* out_row = dst.data() + (o * out_extent + x) * inner;
      if (outside[x]) std::fill(out_row, out_row + inner, a.extrapolation);
      for (const auto& [index, w] : taps[x]) {
        const double* in_row = src.data() + (o * in + index) * inner;
        for (int64_t i = 0; i < inner; ++i) out_row[i] += w * in_row[i];
      }
    }
  }
}

// Per output position of a linearly resized axis, its two source positions
// and the second one's weight.
struct LinearTaps {
  std::vector<int64_t> low, high;
  std::vector<float> weight;
};

void LinearTapsFor(const ResizeAttributes& a, int64_t in, int64_t out, double scale,
                   LinearTaps& taps) {
  taps.low.resize(out);
  taps.high.resize(out);
  taps.weight.resize(out);
  for (int64_t i = 0; i < out; ++i) {
    const double s = SourceCoordinate(a, static_cast<double>(i), scale, in, out, Crop{});
    const double c = std::clamp(s, 0.0, static_cast<double>(in - 1));
    const auto low = SaturatingCast<int64_t>(std::floor(c));
    taps.low[i] = low;
    taps.high[i] = std::min(low + 1, in - 1);
    taps.weight[i] = static_cast<float>(c - static_cast<double>(low));
  }
}

// Bilinear resizing of `planes` images of `in_h` x `in_w` floats into
// `rows` x `columns`, each output the blend of its four neighbours.
void ResizePlanesBilinear(const float* x, float* y, int64_t planes, int64_t in_h, int64_t in_w,
                          const LinearTaps& rows, const LinearTaps& columns) {
  const int64_t out_h = static_cast<int64_t>(rows.low.size());
  const int64_t out_w = static_cast<int64_t>(columns.low.size());
  for (int64_t p = 0; p < planes; ++p) {
    const float* image = x + p * in_h * in_w;
    float* out = y + p * out_h * out_w;
    for (int64_t r = 0; r < out_h; ++r) {
      const float* top = image + rows.low[r] * in_w;
      const float* bottom = image + rows.high[r] * in_w;
      const float wy = rows.weight[r];
      float* out_row = out + r * out_w;
      for (int64_t c = 0; c < out_w; ++c) {
        const int64_t l = columns.low[c];
        const int64_t h = columns.high[c];
        const float wx = columns.weight[c];
        const float upper = top[l] + (top[h] - top[l]) * wx;
        const float lower = bottom[l] + (bottom[h] - bottom[l]) * wx;
        out_row[c] = upper + (lower - upper) * wy;
      }
    }
  }
}

// Nearest resampling picks, per output position of each axis, one input
// position, so the whole resize is a gather of elements, exact for every
// type and far cheaper than the separable pass in double: each output row
// of the last axis gathers from one input row, and a row whose input row is
// the last one's (an upscale's repeats) is a copy of it.
template <typename Bits>
void GatherNearest(const std::vector<std::vector<int64_t>>& index, const Dims& in_dims,
                   const Dims& out_dims, const void* x, void* y) {
  const size_t rank = out_dims.size();
  const int64_t width = out_dims[rank - 1];
  const int64_t rows = ElementCount(out_dims) / std::max<int64_t>(width, 1);
  if (width == 0 || rows == 0) return;
  const Dims in_strides = StridesOf(in_dims);
  const auto* src = static_cast<const Bits*>(x);
  auto* dst = static_cast<Bits*>(y);
  const std::vector<int64_t>& columns = index[rank - 1];
  Dims position(rank, 0);  // of the output row, last axis 0
  int64_t previous = -1;
  for (int64_t row = 0; row < rows; ++row) {
    int64_t offset = 0;
    for (size_t axis = 0; axis + 1 < rank; ++axis) {
      offset += index[axis][position[axis]] * in_strides[axis];
    }
    Bits* out_row = dst + row * width;
    if (offset == previous) {
      std::copy_n(out_row - width, width, out_row);
    } else {
      const Bits* in_row = src + offset;
      for (int64_t i = 0; i < width; ++i) out_row[i] = in_row[columns[i]];
    }
    previous = offset;
    for (size_t axis = rank - 1; axis-- > 0;) {
      if (++position[axis] < out_dims[axis]) break;
      position[axis] = 0;
    }
  }
}

class ResizeKernel : public CpuKernel {
 public:
  ResizeKernel(ResizeAttributes attributes, int64_t roi_input, int64_t scales_input,
               int64_t sizes_input, std::vector<float> scales_attr)
      : CpuKernel(false),
        attributes_(std::move(attributes)),
        roi_input_(roi_input),
        scales_input_(scales_input),
        sizes_input_(sizes_input),
        scales_attr_(std::move(scales_attr)) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    Dims dims = DimsOf(x);
    const size_t rank = dims.size();
    // The axes scales, sizes and roi speak of.
    std::vector<size_t> axes;
    for (int64_t axis : attributes_.axes) {
      axes.push_back(
          static_cast<size_t>(NormalizeAxis(axis, static_cast<int64_t>(rank), "Resize")));
    }
    if (attributes_.axes.empty()) {
      for (size_t i = 0; i < rank; ++i) axes.push_back(i);
    }
    std::vector<double> scales(rank, 1.0);
    Dims out_dims = dims;
    std::vector<double> given_scales(scales_attr_.begin(), scales_attr_.end());
    if (scales_input_ >= 0 && IsPresent(inputs, scales_input_) &&
        ElementCount(inputs[scales_input_].tensor) > 0) {
      const nxrt_tensor& s = inputs[scales_input_].tensor;
      given_scales.assign(DataAs<float>(s), DataAs<float>(s) + ElementCount(s));
    }
    if (sizes_input_ >= 0 && IsPresent(inputs, sizes_input_) &&
        ElementCount(inputs[sizes_input_].tensor) > 0) {
      const Dims sizes = ReadInt64s(inputs[sizes_input_].tensor);
      if (sizes.size() != axes.size()) FailInvalid("Resize: sizes do not match the axes");
      const std::string& keep = attributes_.keep_aspect;
      // not_larger and not_smaller keep the aspect ratio with one scale.
      double common = keep == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
      for (size_t k = 0; k < axes.size(); ++k) {
        if (keep != "stretch" && dims[axes[k]] == 0) {
          FailInvalid("Resize: axis " + std::to_string(axes[k]) +
                      " of the input is empty, so it gives no aspect ratio to keep; use "
                      "keep_aspect_ratio_policy=stretch");
        }
        const double ratio = static_cast<double>(sizes[k]) / static_cast<double>(dims[axes[k]]);
        common = keep == "not_larger" ? std::min(common, ratio) : std::max(common, ratio);
      }
      for (size_t k = 0; k < axes.size(); ++k) {
        const size_t axis = axes[k];
        if (keep == "stretch") {
          out_dims[axis] = sizes[k];
          scales[axis] = static_cast<double>(sizes[k]) / static_cast<double>(dims[axis]);
        } else {
          scales[axis] = common;
          out_dims[axis] =
              SaturatingCast<int64_t>(std::floor(common * static_cast<double>(dims[axis]) + 0.5));
        }
      }
    } else {
      if (given_scales.size() != axes.size()) FailInvalid("Resize: scales do not match the axes");
      for (size_t k = 0; k < axes.size(); ++k) {
        const size_t axis = axes[k];
        if (!(given_scales[k] > 0) || !std::isfinite(given_scales[k])) {
          FailInvalid("Resize: scale " + std::to_string(given_scales[k]) + " for axis " +
                      std::to_string(axis) + "; scales must be positive and finite");
        }
        scales[axis] = given_scales[k];
        out_dims[axis] =
            SaturatingCast<int64_t>(std::floor(static_cast<double>(dims[axis]) * scales[axis]));
      }
    }
    for (size_t axis = 0; axis < rank; ++axis) {
      if (out_dims[axis] < 0) {
        FailInvalid("Resize: output extent " + std::to_string(out_dims[axis]) + " on axis " +
                    std::to_string(axis) + "; sizes must not be negative");
      }
      if (dims[axis] == 0 && out_dims[axis] > 0) {
        FailInvalid("Resize: axis " + std::to_string(axis) +
                    " of the input is empty, so there is nothing to resample into " +
                    std::to_string(out_dims[axis]) +
                    " values; give the axis elements or resize it to 0");
      }
    }
    std::vector<Crop> crops(rank);
    if (attributes_.transform == "tf_crop_and_resize") {
      if (roi_input_ < 0 || !IsPresent(inputs, roi_input_)) {
        FailInvalid("Resize: tf_crop_and_resize needs the roi input");
      }
      const nxrt_tensor& roi = inputs[roi_input_].tensor;
      if (ElementCount(roi) != static_cast<int64_t>(2 * axes.size())) {
        FailInvalid("Resize: roi needs a start and an end per axis");
      }
      auto at = [&](size_t i) {
        return roi.dtype == NXRT_DTYPE_FLOAT64 ? DataAs<double>(roi)[i]
                                               : static_cast<double>(DataAs<float>(roi)[i]);
      };
      for (size_t k = 0; k < axes.size(); ++k) crops[axes[k]] = {at(k), at(k + axes.size())};
    }
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, x.dtype, out_dims);
    // An empty output needs no tables, however long its other axes.
    if (ElementCount(out) == 0) return;
    if (attributes_.mode == Mode::kNearest && attributes_.transform != "tf_crop_and_resize" &&
        x.dtype != NXRT_DTYPE_STRING && rank > 0) {
      // The tables keep their storage from run to run.
      std::vector<std::vector<int64_t>>& index = nearest_index_;
      index.resize(rank);
      for (size_t axis = 0; axis < rank; ++axis) {
        index[axis].clear();
        for (int64_t i = 0; i < out_dims[axis]; ++i) {
          const double s = SourceCoordinate(attributes_, static_cast<double>(i), scales[axis],
                                            dims[axis], out_dims[axis], crops[axis]);
          index[axis].push_back(
              std::clamp<int64_t>(NearestIndex(attributes_.nearest, s), 0, dims[axis] - 1));
        }
      }
      switch (ElementSize(x.dtype)) {
        case 1:
          return GatherNearest<uint8_t>(index, dims, out_dims, x.data, out.data);
        case 2:
          return GatherNearest<uint16_t>(index, dims, out_dims, x.data, out.data);
        case 4:
          return GatherNearest<uint32_t>(index, dims, out_dims, x.data, out.data);
        case 8:
          return GatherNearest<uint64_t>(index, dims, out_dims, x.data, out.data);
        default:
          break;  // sub-byte or wider types: the separable pass below
      }
    }
    if (BilinearOnTheLastTwoAxes(x.dtype, dims, out_dims, scales)) {
      LinearTapsFor(attributes_, dims[rank - 2], out_dims[rank - 2], scales[rank - 2], row_taps_);
      LinearTapsFor(attributes_, dims[rank - 1], out_dims[rank - 1], scales[rank - 1],
                    column_taps_);
      const int64_t planes = ElementCount(std::span<const int64_t>(dims).first(rank - 2));
      return ResizePlanesBilinear(DataAs<float>(x), MutableDataAs<float>(out), planes,
                                  dims[rank - 2], dims[rank - 1], row_taps_, column_taps_);
    }
    Dispatch(NumericTypes{}, x.dtype, "Resize", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const int64_t n = ElementCount(dims);
      std::vector<double> current(n), next;
      for (int64_t i = 0; i < n; ++i)
        current[i] = static_cast<double>(static_cast<C>(DataAs<T>(x)[i]));
      // Shrinking axes first, so no intermediate outgrows both the input
      // and the output (an axis grown 2^26 times beside one shrunk as much
      // would otherwise pass through 2^26 times the output).
      std::vector<size_t> axes(rank);
      std::iota(axes.begin(), axes.end(), size_t{0});
      std::stable_partition(axes.begin(), axes.end(),
                            [&](size_t axis) { return out_dims[axis] <= dims[axis]; });
      for (size_t axis : axes) {
        if (out_dims[axis] == dims[axis] && scales[axis] == 1.0 &&
            attributes_.transform != "tf_crop_and_resize") {
          continue;
        }
        ResampleAxis(attributes_, current, dims, axis, out_dims[axis], scales[axis], crops[axis],
                     next);
        current.swap(next);
        dims[axis] = out_dims[axis];
      }
      T* y = MutableDataAs<T>(out);
      for (size_t i = 0; i < current.size(); ++i) {
        if constexpr (kIsFloat<T>) {
          y[i] = static_cast<T>(static_cast<C>(current[i]));
        } else {
          y[i] = static_cast<T>(std::round(current[i]));
        }
      }
    });
  }

 private:
  ResizeAttributes attributes_;
  int64_t roi_input_;
  int64_t scales_input_;
  int64_t sizes_input_;
  std::vector<float> scales_attr_;
  // Whether the resize is linear on float32, of the last two axes alone and
  // without antialiasing or a crop, so ResizePlanesBilinear computes it.
  bool BilinearOnTheLastTwoAxes(nxrt_dtype dtype, const Dims& dims, const Dims& out_dims,
                                const std::vector<double>& scales) const {
    const size_t rank = dims.size();
    if (attributes_.mode != Mode::kLinear || dtype != NXRT_DTYPE_FLOAT32 || rank < 2 ||
        attributes_.transform == "tf_crop_and_resize" || ElementCount(out_dims) == 0) {
      return false;
    }
    for (size_t axis = 0; axis + 2 < rank; ++axis) {
      if (out_dims[axis] != dims[axis] || scales[axis] != 1.0) return false;
    }
    return !attributes_.antialias || (scales[rank - 2] >= 1.0 && scales[rank - 1] >= 1.0);
  }

  std::vector<std::vector<int64_t>> nearest_index_;  // per axis, the input index of each output
  LinearTaps row_taps_, column_taps_;                // the bilinear path's; storage kept
};

Mode ParseMode(const std::string& mode) {
  if (mode == "linear" || mode == "bilinear") return Mode::kLinear;
  if (mode == "cubic") return Mode::kCubic;
  return Mode::kNearest;
}

}  // namespace

void RegisterResizeOps(OpRegistry& r) {
  r.Add("Resize",
        {10,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           const std::string mode = node.AttrString("mode", "nearest");
           if (mode != "nearest" && mode != "linear" && mode != "cubic") {
             return sdk::ClaimResult::Declined("Resize: mode=" + mode + " not implemented");
           }
           const std::string keep = node.AttrString("keep_aspect_ratio_policy", "stretch");
           if (keep != "stretch" && keep != "not_larger" && keep != "not_smaller") {
             return sdk::ClaimResult::Declined("Resize: keep_aspect_ratio_policy=" + keep +
                                               " not implemented");
           }
           return ClaimUnless(CheckInputDtype(node, inputs, 0, NumericTypes{}));
         },
         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t opset) {
           ResizeAttributes a;
           a.mode = ParseMode(node.AttrString("mode", "nearest"));
           a.transform = opset < 11
                             ? "asymmetric"
                             : node.AttrString("coordinate_transformation_mode", "half_pixel");
           a.nearest = opset < 11 ? "floor" : node.AttrString("nearest_mode", "round_prefer_floor");
           a.cubic_a = node.AttrFloat("cubic_coeff_a", -0.75f);
           a.exclude_outside = node.AttrInt("exclude_outside", 0) != 0;
           a.antialias = node.AttrInt("antialias", 0) != 0;
           a.extrapolation = node.AttrFloat("extrapolation_value", 0.0f);
           a.keep_aspect = node.AttrString("keep_aspect_ratio_policy", "stretch");
           a.axes = node.AttrInts("axes");
           return std::make_unique<ResizeKernel>(a, opset < 11 ? -1 : 1, opset < 11 ? 1 : 2,
                                                 opset < 11 ? -1 : 3, std::vector<float>{});
         }});
  r.Add("Upsample",
        {7,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           const std::string mode = node.AttrString("mode", "nearest");
           if (mode != "nearest" && mode != "linear" && mode != "bilinear") {
             return sdk::ClaimResult::Declined("Upsample: mode=" + mode + " not implemented");
           }
           return ClaimUnless(CheckInputDtype(node, inputs, 0, NumericTypes{}));
         },
         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t opset) {
           ResizeAttributes a;
           a.mode = ParseMode(node.AttrString("mode", "nearest"));
           a.transform = "asymmetric";
           a.nearest = "floor";
           return std::make_unique<ResizeKernel>(a, -1, opset >= 9 ? 1 : -1, -1,
                                                 node.AttrFloats("scales"));
         }});
}

}  // namespace nxrt::cpu
