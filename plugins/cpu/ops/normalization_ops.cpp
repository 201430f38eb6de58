// Normalisation ops: BatchNormalization (inference and training),
// LayerNormalization (with its optional Mean and InvStdDev outputs),
// InstanceNormalization, GroupNormalization, MeanVarianceNormalization,
// LpNormalization and LRN. Statistics are taken in double and the result is
// written back in the input's dtype; float BatchNormalization at inference
// applies its per-channel affine in float. A float LayerNormalization with a
// full-size scale and no statistics outputs runs on oneDNN
// (onednn/float_layer_norm.hpp).
#include <array>
#include <cmath>
#include <optional>
#include <utility>

#include "cpu_kernel.hpp"
#include "isa_clones.hpp"
#include "onednn/float_layer_norm.hpp"

namespace nxrt::cpu {
namespace {

template <typename T>
double At(const T* p, int64_t i) {
  return static_cast<double>(static_cast<ComputeType<T>>(p[i]));
}
template <typename T>
T From(double v) {
  return static_cast<T>(static_cast<ComputeType<T>>(v));
}

// The mean and the mean squared deviation of `size` values of `x`, in
// double, over eight lanes the vectoriser can widen.
template <typename T>
NXRT_ISA_CLONES std::pair<double, double> Moments(const T* x, int64_t size) {
  constexpr int64_t kLanes = 8;
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= size; i += kLanes) {
    for (int64_t k = 0; k < kLanes; ++k) lanes[k] += At(x, i + k);
  }
  double sum = 0;
  for (double lane : lanes) sum += lane;
  for (; i < size; ++i) sum += At(x, i);
  const double mean = sum / static_cast<double>(size);
  double squares[kLanes] = {};
  i = 0;
  for (; i + kLanes <= size; i += kLanes) {
    for (int64_t k = 0; k < kLanes; ++k) {
      const double d = At(x, i + k) - mean;
      squares[k] += d * d;
    }
  }
  double deviation = 0;
  for (double lane : squares) deviation += lane;
  for (; i < size; ++i) deviation += (At(x, i) - mean) * (At(x, i) - mean);
  return {mean, deviation / static_cast<double>(size)};
}

// y = x * a + b over `size` values, in double.
template <typename T>
NXRT_ISA_CLONES void ScaleShift(const T* x, int64_t size, double a, double b, T* y) {
  for (int64_t i = 0; i < size; ++i) y[i] = From<T>(At(x, i) * a + b);
}

// BatchNormalization. At inference it uses the given mean and variance; in
// training it uses the batch's own (over N and the spatial axes) and writes
// the running statistics momentum * given + (1 - momentum) * batch. Before
// opset 9, spatial=0 gives every element of a sample its own parameters.
class BatchNormKernel : public CpuKernel {
 public:
  // Capture-safe only at inference: training builds the statistics' dims.
  BatchNormKernel(nxrt_dtype dtype, float epsilon, float momentum, bool training, bool spatial)
      : CpuKernel(!training),
        dtype_(dtype),
        epsilon_(epsilon),
        momentum_(momentum),
        training_(training),
        spatial_(spatial) {}
  // Every extent is read from the call.
  bool ServesOtherShapes() const override { return true; }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const std::span<const int64_t> dims = DimsSpan(x);
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, dims);
    const int64_t n = dims.empty() ? 1 : dims[0];
    const int64_t c = dims.size() > 1 ? dims[1] : 1;
    const int64_t plane = n * c > 0 ? ElementCount(dims) / (n * c) : 0;
    // Parameters per channel, or per element of a sample when not spatial.
    const int64_t per = spatial_ ? 1 : plane;
    // The running mean and variance outputs, when training asks for them.
    std::array<nxrt_tensor*, 2> running{};
    for (size_t k = 0; training_ && k < 2; ++k) {
      if (outputs.size() <= k + 1 || outputs[k + 1].kind != NXRT_VALUE_TENSOR) continue;
      running[k] = &PrepareOutput(ctx, outputs, k + 1, inputs[k + 3].tensor.dtype, Dims{c});
    }
    auto param = [&](size_t input, int64_t i) {
      const nxrt_tensor& t = inputs[input].tensor;
      return Dispatch(FloatTypes{}, t.dtype, "BatchNormalization",
                      [&](auto ptag) { return At(DataAs<typename decltype(ptag)::type>(t), i); });
    };
    Dispatch(FloatTypes{}, dtype_, "BatchNormalization", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xp = DataAs<T>(x);
      T* y = MutableDataAs<T>(out);
      for (int64_t ch = 0; ch < c; ++ch) {
        double batch_mean = 0;
        double batch_var = 0;
        if (training_) {
          for (int64_t b = 0; b < n; ++b) {
            for (int64_t i = 0; i < plane; ++i) batch_mean += At(xp, (b * c + ch) * plane + i);
          }
          batch_mean /= static_cast<double>(n * plane);
          for (int64_t b = 0; b < n; ++b) {
            for (int64_t i = 0; i < plane; ++i) {
              const double d = At(xp, (b * c + ch) * plane + i) - batch_mean;
              batch_var += d * d;
            }
          }
          batch_var /= static_cast<double>(n * plane);
          if (running[0]) WriteRunning(*running[0], inputs[3].tensor, ch, batch_mean);
          if (running[1]) WriteRunning(*running[1], inputs[4].tensor, ch, batch_var);
        }
        // y = x * scale + shift with the parameters at `at`, read once per
        // channel (spatial) or per position of a sample.
        auto affine = [&](int64_t at) {
          const double mean = training_ ? batch_mean : param(3, at);
          const double var = training_ ? batch_var : param(4, at);
          const double scale = param(1, at) / std::sqrt(var + epsilon_);
          return std::pair{scale, param(2, at) - mean * scale};
        };
        if (spatial_) {
          const auto [scale, shift] = affine(ch);
          for (int64_t b = 0; b < n; ++b) {
            const int64_t base = (b * c + ch) * plane;
            if constexpr (std::is_same_v<T, float>) {
              const float scale_f = static_cast<float>(scale);
              const float shift_f = static_cast<float>(shift);
              for (int64_t i = 0; i < plane; ++i) y[base + i] = xp[base + i] * scale_f + shift_f;
            } else {
              for (int64_t i = 0; i < plane; ++i) {
                y[base + i] = From<T>(At(xp, base + i) * scale + shift);
              }
            }
          }
          continue;
        }
        for (int64_t i = 0; i < plane; ++i) {
          const auto [scale, shift] = affine(ch * per + i);
          for (int64_t b = 0; b < n; ++b) {
            const int64_t e = (b * c + ch) * plane + i;
            y[e] = From<T>(At(xp, e) * scale + shift);
          }
        }
      }
    });
  }

 private:
  // Channel `ch` of a running statistic from the given one and the batch's.
  void WriteRunning(nxrt_tensor& t, const nxrt_tensor& g, int64_t ch, double batch) {
    Dispatch(FloatTypes{}, g.dtype, "BatchNormalization", [&](auto tag) {
      using T = typename decltype(tag)::type;
      MutableDataAs<T>(t)[ch] =
          From<T>(At(DataAs<T>(g), ch) * momentum_ + batch * (1.0 - momentum_));
    });
  }

  nxrt_dtype dtype_;
  float epsilon_;
  float momentum_;
  bool training_;
  bool spatial_;
};

// LayerNormalization in float on oneDNN: rows of the trailing axes from
// `axis`, a scale (and shift) of one row's size.
class OneDnnLayerNormKernel : public CpuKernel {
 public:
  explicit OneDnnLayerNormKernel(onednn::FloatLayerNorm layer_norm)
      : CpuKernel(true), layer_norm_(std::move(layer_norm)) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_FLOAT32, DimsSpan(x));
    layer_norm_.Run(DataAs<float>(x), DataAs<float>(inputs[1].tensor),
                    IsPresent(inputs, 2) ? DataAs<float>(inputs[2].tensor) : nullptr,
                    MutableDataAs<float>(out));
  }

 private:
  onednn::FloatLayerNorm layer_norm_;
};

// The oneDNN plan for a LayerNormalization node at `inputs`, when it fits:
// float, one output, a scale and shift holding exactly one row.
std::optional<onednn::FloatLayerNorm> PlanOneDnnLayerNorm(const sdk::Node& node,
                                                          std::span<const nxrt_shape> inputs) {
  if (inputs[0].dtype != NXRT_DTYPE_FLOAT32 || node.output_count() > 1 || inputs.size() < 2) {
    return std::nullopt;
  }
  const std::span<const int64_t> dims(inputs[0].dims, inputs[0].rank);
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t axis = node.AttrInt("axis", -1);
  if (axis < -rank || axis >= rank) return std::nullopt;
  const auto split = dims.begin() + (axis < 0 ? axis + rank : axis);
  const int64_t columns = ElementCount(std::span<const int64_t>(split, dims.end()));
  const int64_t rows = ElementCount(std::span<const int64_t>(dims.begin(), split));
  const bool shift = inputs.size() > 2 && inputs[2].dtype != NXRT_DTYPE_UNDEFINED;
  auto holds_one_row = [&](const nxrt_shape& p) {
    return p.dtype == NXRT_DTYPE_FLOAT32 &&
           ElementCount(std::span<const int64_t>(p.dims, p.rank)) == columns;
  };
  if (rows <= 0 || columns <= 0 || !holds_one_row(inputs[1]) ||
      (shift && !holds_one_row(inputs[2]))) {
    return std::nullopt;
  }
  return onednn::FloatLayerNorm::Plan(rows, columns, node.AttrFloat("epsilon", 1e-5f), shift);
}

// Normalises each of `groups` runs of `size` contiguous elements, then
// applies a per-element (LayerNorm) or per-channel (InstanceNorm) affine.
// GroupNormalization runs num_groups runs per sample, with an affine per
// group (opset 18) or per channel (opset 21).
class LayerNormKernel : public CpuKernel {
 public:
  enum class Affine { kPerElement, kPerChannel, kPerGroup, kGroupChannels, kNone };
  // Capture-safe only without the statistics outputs, whose dims it builds.
  LayerNormKernel(nxrt_dtype dtype, int64_t axis, float epsilon, Affine affine, bool statistics,
                  int64_t num_groups = 1)
      : CpuKernel(!statistics),
        dtype_(dtype),
        axis_(axis),
        epsilon_(epsilon),
        affine_(affine),
        num_groups_(num_groups) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const std::span<const int64_t> dims = DimsSpan(x);
    const int64_t rank = static_cast<int64_t>(dims.size());
    const bool grouped = affine_ == Affine::kPerGroup || affine_ == Affine::kGroupChannels;
    int64_t axis = affine_ == Affine::kPerChannel ? 2
                   : grouped                      ? 1
                                                  : NormalizeAxis(axis_, rank, "LayerNorm");
    int64_t groups = 1;
    for (int64_t i = 0; i < axis; ++i) groups *= dims[i];
    const int64_t channels = dims.size() > 1 ? dims[1] : 1;
    if (grouped) {
      if (num_groups_ <= 0 || channels % num_groups_ != 0) {
        FailInvalid("GroupNormalization: " + std::to_string(channels) +
                    " channels do not split into " + std::to_string(num_groups_) + " groups");
      }
      groups *= num_groups_;
    }
    const int64_t size = groups ? ElementCount(dims) / groups : 0;
    // Elements of one channel inside a group's run.
    const int64_t plane = grouped && channels ? size * num_groups_ / channels : 1;
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, dims);
    float* mean_out = nullptr;
    float* inv_std_out = nullptr;
    if (affine_ == Affine::kPerElement) {
      for (size_t k = 1; k < 3 && k < outputs.size(); ++k) {
        if (outputs[k].kind != NXRT_VALUE_TENSOR) continue;
        Dims stat_dims(dims.begin(), dims.end());
        for (int64_t i = axis; i < rank; ++i) stat_dims[i] = 1;
        float* p =
            MutableDataAs<float>(PrepareOutput(ctx, outputs, k, NXRT_DTYPE_FLOAT32, stat_dims));
        (k == 1 ? mean_out : inv_std_out) = p;
      }
    }
    Dispatch(FloatTypes{}, dtype_, "LayerNormalization", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xp = DataAs<T>(x);
      T* y = MutableDataAs<T>(out);
      const T* scale = IsPresent(inputs, 1) ? DataAs<T>(inputs[1].tensor) : nullptr;
      const T* bias = IsPresent(inputs, 2) ? DataAs<T>(inputs[2].tensor) : nullptr;
      for (int64_t g = 0; g < groups; ++g) {
        const int64_t base = g * size;
        const auto [mean, var] = Moments(xp + base, size);
        const double inv_std = 1.0 / std::sqrt(var + epsilon_);
        if (mean_out) mean_out[g] = static_cast<float>(mean);
        if (inv_std_out) inv_std_out[g] = static_cast<float>(inv_std);
        const int64_t channel = g % channels;
        // One scale and shift for the whole run: a single pass.
        if (affine_ == Affine::kPerChannel || affine_ == Affine::kPerGroup ||
            affine_ == Affine::kNone) {
          const int64_t at = affine_ == Affine::kPerChannel ? channel : g % num_groups_;
          const double a = affine_ == Affine::kNone ? inv_std : inv_std * At(scale, at);
          const double b = affine_ == Affine::kNone ? -mean * a : At(bias, at) - mean * a;
          ScaleShift(xp + base, size, a, b, y + base);
          continue;
        }
        for (int64_t i = 0; i < size; ++i) {
          double v = (At(xp, base + i) - mean) * inv_std;
          if (affine_ == Affine::kPerElement) {
            if (scale) v *= At(scale, i);
            if (bias) v += At(bias, i);
          } else if (affine_ == Affine::kPerChannel) {
            v = v * At(scale, channel) + At(bias, channel);
          } else if (affine_ == Affine::kPerGroup) {
            v = v * At(scale, g % num_groups_) + At(bias, g % num_groups_);
          } else if (affine_ == Affine::kGroupChannels) {
            const int64_t c = (g % num_groups_) * (size / plane) + i / plane;
            v = v * At(scale, c) + At(bias, c);
          }
          y[base + i] = From<T>(v);
        }
      }
    });
  }

 private:
  nxrt_dtype dtype_;
  int64_t axis_;
  float epsilon_;
  Affine affine_;
  int64_t num_groups_;
};

// LpNormalization: x divided by its L1 or L2 norm along one axis; a zero
// vector stays zero.
class LpNormKernel : public CpuKernel {
 public:
  LpNormKernel(nxrt_dtype dtype, int64_t axis, int64_t p)
      : CpuKernel(true), dtype_(dtype), axis_(axis), p_(p) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const std::span<const int64_t> dims = DimsSpan(x);
    const int64_t axis = NormalizeAxis(axis_, static_cast<int64_t>(dims.size()), "LpNormalization");
    int64_t outer = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= dims[i];
    int64_t inner = 1;
    for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
    const int64_t n = dims[axis];
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, dims);
    Dispatch(FloatTypes{}, dtype_, "LpNormalization", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xp = DataAs<T>(x);
      T* y = MutableDataAs<T>(out);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t j = 0; j < inner; ++j) {
          const int64_t base = o * n * inner + j;
          double norm = 0;
          for (int64_t k = 0; k < n; ++k) {
            const double v = At(xp, base + k * inner);
            norm += p_ == 1 ? std::abs(v) : v * v;
          }
          if (p_ == 2) norm = std::sqrt(norm);
          for (int64_t k = 0; k < n; ++k) {
            y[base + k * inner] = From<T>(norm == 0 ? 0.0 : At(xp, base + k * inner) / norm);
          }
        }
      }
    });
  }

 private:
  nxrt_dtype dtype_;
  int64_t axis_;
  int64_t p_;
};

// MeanVarianceNormalization over arbitrary axes (default N, H, W).
class MvnKernel : public CpuKernel {
 public:
  MvnKernel(nxrt_dtype dtype, std::vector<int64_t> axes)
      : CpuKernel(false), dtype_(dtype), axes_(std::move(axes)) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const Dims dims = DimsOf(x);
    const int64_t rank = static_cast<int64_t>(dims.size());
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, dims);
    Dims stat_dims = dims;
    for (int64_t a : axes_) stat_dims[NormalizeAxis(a, rank, "MeanVarianceNormalization")] = 1;
    const Dims strides = StridesOf(dims);
    const Dims stat_strides = StridesOf(stat_dims);
    const int64_t total = ElementCount(dims);
    const int64_t stats = ElementCount(stat_dims);
    const double count = stats ? static_cast<double>(total) / static_cast<double>(stats) : 1.0;
    std::vector<int64_t> slot(total);
    for (int64_t i = 0; i < total; ++i) {
      int64_t s = 0;
      for (int64_t a = 0; a < rank; ++a) {
        const int64_t coord = (i / strides[a]) % dims[a];
        if (stat_dims[a] != 1) s += coord * stat_strides[a];
      }
      slot[i] = s;
    }
    Dispatch(FloatTypes{}, dtype_, "MeanVarianceNormalization", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xp = DataAs<T>(x);
      T* y = MutableDataAs<T>(out);
      std::vector<double> mean(stats, 0.0), var(stats, 0.0);
      for (int64_t i = 0; i < total; ++i) mean[slot[i]] += At(xp, i);
      for (double& m : mean) m /= count;
      for (int64_t i = 0; i < total; ++i) {
        const double d = At(xp, i) - mean[slot[i]];
        var[slot[i]] += d * d;
      }
      for (int64_t i = 0; i < total; ++i) {
        const double sd = std::sqrt(var[slot[i]] / count);
        y[i] = From<T>((At(xp, i) - mean[slot[i]]) / (sd + 1e-9));
      }
    });
  }

 private:
  nxrt_dtype dtype_;
  std::vector<int64_t> axes_;
};

class LrnKernel : public CpuKernel {
 public:
  LrnKernel(const sdk::Node& node, nxrt_dtype dtype)
      : CpuKernel(true),
        dtype_(dtype),
        alpha_(node.AttrFloat("alpha", 0.0001f)),
        beta_(node.AttrFloat("beta", 0.75f)),
        bias_(node.AttrFloat("bias", 1.0f)),
        size_(node.AttrInt("size", 1)) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const std::span<const int64_t> dims = DimsSpan(x);
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, dims);
    const int64_t n = dims[0];
    const int64_t c = dims[1];
    const int64_t plane = ElementCount(dims) / std::max<int64_t>(n * c, 1);
    const int64_t before = (size_ - 1) / 2;
    const int64_t after = size_ - 1 - before;
    Dispatch(FloatTypes{}, dtype_, "LRN", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xp = DataAs<T>(x);
      T* y = MutableDataAs<T>(out);
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t ch = 0; ch < c; ++ch) {
          for (int64_t i = 0; i < plane; ++i) {
            double square_sum = 0;
            for (int64_t k = std::max<int64_t>(0, ch - before); k <= std::min(c - 1, ch + after);
                 ++k) {
              const double v = At(xp, (b * c + k) * plane + i);
              square_sum += v * v;
            }
            const int64_t at = (b * c + ch) * plane + i;
            y[at] = From<T>(At(xp, at) /
                            std::pow(bias_ + alpha_ / static_cast<double>(size_) * square_sum,
                                     static_cast<double>(beta_)));
          }
        }
      }
    });
  }

 private:
  nxrt_dtype dtype_;
  float alpha_;
  float beta_;
  float bias_;
  int64_t size_;
};

// The extent of axis 1 (the channels) of input 0, 1 below rank 2.
int64_t Channels(std::span<const nxrt_shape> inputs) {
  return inputs[0].rank > 1 ? inputs[0].dims[1] : 1;
}

}  // namespace

void RegisterNormalizationOps(OpRegistry& r) {
  // Training: the training_mode attribute from opset 14, the statistics
  // outputs before it, is_test=0 before opset 7.
  auto bn_training = [](const sdk::Node& node, int64_t opset) {
    if (opset >= 14) return node.AttrInt("training_mode", 0) != 0;
    if (opset < 7) return node.AttrInt("is_test", 0) == 0;
    return node.output_count() > 1;
  };
  r.Add("BatchNormalization",
        {1,
         [bn_training](const sdk::Node& node, int64_t opset,
                       std::span<const nxrt_value_info> inputs) {
           const bool training = bn_training(node, opset);
           if (training && node.output_count() > 3) {
             return sdk::ClaimResult::Declined(
                 "BatchNormalization: saved mean and variance outputs not implemented");
           }
           if (opset < 9 && node.AttrInt("spatial", 1) == 0 && training) {
             return sdk::ClaimResult::Declined(
                 "BatchNormalization: training with spatial=0 not implemented");
           }
           return ClaimUnless(CheckInputDtype(node, inputs, 0, FloatTypes{}));
         },
         [bn_training](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t opset) {
           const bool spatial = opset >= 9 || node.AttrInt("spatial", 1) != 0;
           // One parameter per channel, or per element of a sample when not spatial.
           const std::span<const int64_t> x(inputs[0].dims, inputs[0].rank);
           const int64_t sample = x.empty() ? 1 : ElementCount(x.subspan(1));
           const int64_t count = spatial ? Channels(inputs) : sample;
           const char* names[] = {"scale", "B", "mean", "var"};
           for (size_t k = 1; k < 5; ++k) {
             RequireElements(inputs, k, count, "BatchNormalization", names[k - 1]);
           }
           return std::make_unique<BatchNormKernel>(
               inputs[0].dtype, node.AttrFloat("epsilon", 1e-5f), node.AttrFloat("momentum", 0.9f),
               bn_training(node, opset), spatial);
         }});
  r.Add("LayerNormalization",
        {17, ClaimInputDtype(FloatTypes{}),
         [](const sdk::Node& node, std::span<const nxrt_shape> inputs,
            int64_t) -> std::unique_ptr<CpuKernel> {
           if (auto layer_norm = PlanOneDnnLayerNorm(node, inputs)) {
             return std::make_unique<OneDnnLayerNormKernel>(std::move(*layer_norm));
           }
           const std::span<const int64_t> x(inputs[0].dims, inputs[0].rank);
           const int64_t rank = static_cast<int64_t>(x.size());
           const int64_t axis = NormalizeAxis(node.AttrInt("axis", -1), rank, "LayerNormalization");
           const int64_t row = ElementCount(x.subspan(axis));
           RequireElements(inputs, 1, row, "LayerNormalization", "Scale");
           RequireElements(inputs, 2, row, "LayerNormalization", "B");
           return std::make_unique<LayerNormKernel>(
               inputs[0].dtype, node.AttrInt("axis", -1), node.AttrFloat("epsilon", 1e-5f),
               LayerNormKernel::Affine::kPerElement, node.output_count() > 1);
         }});
  r.Add("InstanceNormalization",
        {6, ClaimInputDtype(FloatTypes{}),
         [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
           RequireElements(inputs, 1, Channels(inputs), "InstanceNormalization", "scale");
           RequireElements(inputs, 2, Channels(inputs), "InstanceNormalization", "B");
           return std::make_unique<LayerNormKernel>(inputs[0].dtype, 2,
                                                    node.AttrFloat("epsilon", 1e-5f),
                                                    LayerNormKernel::Affine::kPerChannel, false);
         }});
  r.Add("GroupNormalization",
        {18, ClaimInputDtype(FloatTypes{}),
         [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t opset) {
           // Opset 21 scales each channel; 18 each group.
           const int64_t count = opset >= 21 ? Channels(inputs) : node.AttrInt("num_groups", 0);
           RequireElements(inputs, 1, count, "GroupNormalization", "scale");
           RequireElements(inputs, 2, count, "GroupNormalization", "bias");
           return std::make_unique<LayerNormKernel>(
               inputs[0].dtype, 1, node.AttrFloat("epsilon", 1e-5f),
               opset >= 21 ? LayerNormKernel::Affine::kGroupChannels
                           : LayerNormKernel::Affine::kPerGroup,
               false, node.AttrInt("num_groups", 0));
         }});
  r.Add("LpNormalization",
        {1,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           const int64_t p = node.AttrInt("p", 2);
           if (p != 1 && p != 2) {
             return sdk::ClaimResult::Declined("LpNormalization: p=" + std::to_string(p) +
                                               " not implemented (1 or 2)");
           }
           return ClaimUnless(CheckInputDtype(node, inputs, 0, FloatTypes{}));
         },
         [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
           return std::make_unique<LpNormKernel>(inputs[0].dtype, node.AttrInt("axis", -1),
                                                 node.AttrInt("p", 2));
         }});
  r.Add("MeanVarianceNormalization",
        {9, ClaimInputDtype(FloatTypes{}),
         [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
           std::vector<int64_t> axes = node.AttrInts("axes");
           if (node.attr_type("axes") == NXRT_ATTR_UNDEFINED) axes = {0, 2, 3};
           return std::make_unique<MvnKernel>(inputs[0].dtype, std::move(axes));
         }});
  r.Add("LRN", {1, ClaimInputDtype(FloatTypes{}),
                [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
                  return std::make_unique<LrnKernel>(node, inputs[0].dtype);
                }});
}

}  // namespace nxrt::cpu
