// The row normalisations decoder models use: RMSNormalization (opset 23),
// SimplifiedLayerNormalization (ONNX Runtime's RMS form, which it keeps in the
// default domain), and com.microsoft SkipLayerNormalization and
// SkipSimplifiedLayerNormalization, which first add a residual (and a bias).
// Each row (the trailing axes from `axis`) is divided by its RMS or, when
// centred, its standard deviation after subtracting its mean, then scaled per
// element. Statistics accumulate in double, the variance as ONNX Runtime
// takes it (E[x^2] - mean^2); elements are computed in float for the 16-bit
// types.
// Nothing is allocated per call, so a decode step of one short row is cheap,
// and every extent is read from the call, so one kernel serves every shape
// of a node's ranks.
#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <utility>

#include "cpu_kernel.hpp"

namespace nxrt::cpu {
namespace {

struct RowStats {
  double mean = 0;  // zero when not centred
  double inv_std = 0;
};

// Statistics of the `size` values `load(i)` gives. Independent partial sums
// keep the loop vectorisable without reassociating floating-point adds.
template <bool kCentred, typename Load>
RowStats Statistics(int64_t size, float epsilon, const Load& load) {
  constexpr int64_t kLanes = 8;
  double sums[kLanes] = {};
  double squares[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= size; i += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) {
      const double v = static_cast<double>(load(i + j));
      if constexpr (kCentred) sums[j] += v;
      squares[j] += v * v;
    }
  }
  for (; i < size; ++i) {
    const double v = static_cast<double>(load(i));
    if constexpr (kCentred) sums[0] += v;
    squares[0] += v * v;
  }
  double sum = 0;
  double square = 0;
  for (int64_t j = 0; j < kLanes; ++j) {
    sum += sums[j];
    square += squares[j];
  }
  const double n = static_cast<double>(size);
  RowStats stats;
  stats.mean = kCentred ? sum / n : 0.0;
  // Rounding can take a constant row's variance just below zero.
  const double variance = std::max(0.0, square / n - stats.mean * stats.mean);
  stats.inv_std = 1.0 / std::sqrt(variance + epsilon);
  return stats;
}

// out[j] = value(j) for j in [0, n): values of a block are all computed before
// any is stored, so the compiler vectorises the block without having to prove
// that `out` aliases no input.
template <typename T, typename Value>
void StoreBlocked(T* out, int64_t n, const Value& value) {
  constexpr int64_t kBlock = 8;
  using C = ComputeType<T>;
  int64_t j = 0;
  for (; j + kBlock <= n; j += kBlock) {
    C block[kBlock];
    for (int64_t k = 0; k < kBlock; ++k) block[k] = value(j + k);
    for (int64_t k = 0; k < kBlock; ++k) out[j + k] = static_cast<T>(block[k]);
  }
  for (; j < n; ++j) out[j] = static_cast<T>(value(j));
}

// y = (load(i) - mean) * inv_std * scale (+ bias); scale and bias repeat every
// `period` elements of the row.
template <typename T, typename Load>
void WriteRow(T* y, int64_t size, RowStats stats, const Load& load, const T* scale, const T* bias,
              int64_t period) {
  using C = ComputeType<T>;
  const C mean = static_cast<C>(stats.mean);
  const C inv_std = static_cast<C>(stats.inv_std);
  for (int64_t start = 0; start < size; start += period) {
    if (bias) {
      StoreBlocked(y + start, period, [&](int64_t j) {
        return (load(start + j) - mean) * inv_std * static_cast<C>(scale[j]) +
               static_cast<C>(bias[j]);
      });
    } else {
      StoreBlocked(y + start, period, [&](int64_t j) {
        return (load(start + j) - mean) * inv_std * static_cast<C>(scale[j]);
      });
    }
  }
}

// The element count of `operand` when it broadcasts to `row` (the row's
// dims) by repeating along leading axes only, so element i of the row uses
// operand element i % count; 0 when it broadcasts otherwise or not at all.
int64_t RepeatPeriod(std::span<const int64_t> operand, std::span<const int64_t> row) {
  size_t first = 0;
  while (first < operand.size() && operand[first] == 1) ++first;
  const std::span<const int64_t> kept = operand.subspan(first);
  const bool suffix =
      kept.size() <= row.size() && std::ranges::equal(kept, row.subspan(row.size() - kept.size()));
  return suffix ? ElementCount(kept) : 0;
}

// The strides of `operand` over `dims` under numpy broadcasting, zero along
// the axes it repeats; throws when it does not broadcast to `dims`.
void BroadcastStrides(std::span<const int64_t> operand, std::span<const int64_t> dims,
                      std::span<int64_t> strides, const std::string& what) {
  if (operand.size() > dims.size()) {
    FailInvalid(what + " of shape " + DimsText(operand) + " has a higher rank than the input " +
                DimsText(dims) + "; give it at most the input's rank");
  }
  int64_t stride = 1;
  for (size_t k = 0; k < dims.size(); ++k) {
    const size_t axis = dims.size() - 1 - k;
    const int64_t dim = k < operand.size() ? operand[operand.size() - 1 - k] : 1;
    if (dim != 1 && dim != dims[axis]) {
      FailInvalid(what + " of shape " + DimsText(operand) + " does not broadcast to the input " +
                  DimsText(dims) + "; give it the input's dims or 1s");
    }
    strides[axis] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
}

// The offset in a broadcast operand of element `flat` of `dims`.
int64_t BroadcastOffset(int64_t flat, std::span<const int64_t> dims,
                        std::span<const int64_t> strides) {
  int64_t offset = 0;
  for (size_t axis = dims.size(); axis-- > 0;) {
    offset += (flat % dims[axis]) * strides[axis];
    flat /= dims[axis];
  }
  return offset;
}

// The statistics outputs' dims: the input's dims with the row axes set to 1.
// Writes into `stat_dims` (sized by the caller) so nothing is allocated.
void StatDims(std::span<const int64_t> dims, int64_t axis, std::span<int64_t> stat_dims) {
  for (size_t i = 0; i < dims.size(); ++i) {
    stat_dims[i] = static_cast<int64_t>(i) < axis ? dims[i] : 1;
  }
}

// The float32 statistics output `index` when the graph asks for it.
float* StatOutput(sdk::ComputeContext& ctx, std::span<nxrt_value> outputs, size_t index,
                  std::span<const int64_t> stat_dims) {
  if (index >= outputs.size() || outputs[index].kind != NXRT_VALUE_TENSOR) return nullptr;
  return MutableDataAs<float>(PrepareOutput(ctx, outputs, index, NXRT_DTYPE_FLOAT32, stat_dims));
}

constexpr size_t kMaxRank = 16;

// RMSNormalization and SimplifiedLayerNormalization: inputs X, scale; output
// Y and, for the latter, the optional inverse RMS at output 1.
class RmsNormKernel : public CpuKernel {
 public:
  RmsNormKernel(std::string op, nxrt_dtype dtype, int64_t axis, float epsilon, bool statistics)
      : CpuKernel(true),
        op_(std::move(op)),
        dtype_(dtype),
        axis_(axis),
        epsilon_(epsilon),
        statistics_(statistics) {}
  bool ServesOtherShapes() const override { return true; }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const std::span<const int64_t> dims = DimsSpan(x);
    const int64_t rank = static_cast<int64_t>(dims.size());
    if (dims.size() > kMaxRank) FailUnsupported(op_ + ": input rank above 16 not implemented");
    const int64_t axis = NormalizeAxis(axis_, rank, op_ + " axis");
    const std::span<const int64_t> row = dims.subspan(static_cast<size_t>(axis));
    const int64_t size = ElementCount(row);
    const int64_t rows = size ? ElementCount(dims) / size : 0;
    // Scales that repeat over rows (the usual [hidden]) take the vectorised
    // path; any other broadcast indexes the scale per element.
    const std::span<const int64_t> scale_dims = DimsSpan(inputs[1].tensor);
    int64_t stride_storage[kMaxRank];
    const std::span<int64_t> scale_strides(stride_storage, dims.size());
    BroadcastStrides(scale_dims, dims, scale_strides, op_ + " scale");
    const int64_t period = RepeatPeriod(scale_dims, row);
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, dims);
    int64_t stat_storage[kMaxRank];
    const std::span<int64_t> stat_dims(stat_storage, dims.size());
    StatDims(dims, axis, stat_dims);
    float* inv_std_out = statistics_ ? StatOutput(ctx, outputs, 1, stat_dims) : nullptr;
    Dispatch(FloatTypes{}, dtype_, op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const T* xp = DataAs<T>(x);
      const T* scale = DataAs<T>(inputs[1].tensor);
      T* y = MutableDataAs<T>(out);
      for (int64_t r = 0; r < rows; ++r) {
        const T* in = xp + r * size;
        const auto load = [in](int64_t i) { return static_cast<C>(in[i]); };
        const RowStats stats = Statistics<false>(size, epsilon_, load);
        if (inv_std_out) inv_std_out[r] = static_cast<float>(stats.inv_std);
        if (period) {
          WriteRow(y + r * size, size, stats, load, scale, static_cast<const T*>(nullptr), period);
          continue;
        }
        const C inv_std = static_cast<C>(stats.inv_std);
        for (int64_t i = 0; i < size; ++i) {
          const int64_t at = r * size + i;
          y[at] = static_cast<T>(load(i) * inv_std *
                                 static_cast<C>(scale[BroadcastOffset(at, dims, scale_strides)]));
        }
      }
    });
  }

 private:
  std::string op_;
  nxrt_dtype dtype_;
  int64_t axis_;
  float epsilon_;
  bool statistics_;
};

// SkipLayerNormalization (centred) and SkipSimplifiedLayerNormalization: the
// last axis of input + skip (+ bias) is normalised. Inputs: input, skip,
// gamma, then beta (centred only) and bias; skip repeats over leading rows.
// Outputs: output, mean (zero when not centred, as ONNX Runtime writes it),
// inv_std_var, and the sum itself; all but the first optional.
class SkipNormKernel : public CpuKernel {
 public:
  SkipNormKernel(std::string op, nxrt_dtype dtype, float epsilon, bool centred)
      : CpuKernel(true), op_(std::move(op)), dtype_(dtype), epsilon_(epsilon), centred_(centred) {}
  bool ServesOtherShapes() const override { return true; }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const std::span<const int64_t> dims = DimsSpan(x);
    if (dims.empty() || dims.size() > kMaxRank) {
      FailInvalid(op_ + ": input has rank " + std::to_string(dims.size()) +
                  "; give it rank 2 or 3 (tokens by hidden size)");
    }
    const int64_t size = dims.back();
    const int64_t rows = size ? ElementCount(dims) / size : 0;
    const int64_t skip_count = RepeatPeriod(DimsSpan(inputs[1].tensor), dims);
    if (size == 0 || skip_count == 0 || skip_count % size != 0) {
      FailInvalid(op_ + ": skip of shape " + DimsText(DimsSpan(inputs[1].tensor)) +
                  " does not cover whole rows of " + std::to_string(size) +
                  "; give it the input's trailing dims");
    }
    const int64_t skip_rows = skip_count / size;
    const size_t beta_index = centred_ ? 3 : inputs.size();
    const size_t bias_index = centred_ ? 4 : 3;
    for (size_t index : {size_t{2}, beta_index, bias_index}) {
      if (IsPresent(inputs, index) && ElementCount(inputs[index].tensor) != size) {
        FailInvalid(op_ + ": input " + std::to_string(index) + " has shape " +
                    DimsText(DimsSpan(inputs[index].tensor)) + "; give it shape [" +
                    std::to_string(size) + "], the hidden size");
      }
    }
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, dims);
    int64_t stat_storage[kMaxRank];
    const std::span<int64_t> stat_dims(stat_storage, dims.size());
    StatDims(dims, static_cast<int64_t>(dims.size()) - 1, stat_dims);
    float* mean_out = StatOutput(ctx, outputs, 1, stat_dims);
    float* inv_std_out = StatOutput(ctx, outputs, 2, stat_dims);
    nxrt_tensor* sum_out = outputs.size() > 3 && outputs[3].kind == NXRT_VALUE_TENSOR
                               ? &PrepareOutput(ctx, outputs, 3, dtype_, dims)
                               : nullptr;
    Dispatch(FloatTypes{}, dtype_, op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xp = DataAs<T>(x);
      const T* skip = DataAs<T>(inputs[1].tensor);
      const T* gamma = DataAs<T>(inputs[2].tensor);
      const T* beta =
          IsPresent(inputs, beta_index) ? DataAs<T>(inputs[beta_index].tensor) : nullptr;
      const T* bias =
          IsPresent(inputs, bias_index) ? DataAs<T>(inputs[bias_index].tensor) : nullptr;
      T* y = MutableDataAs<T>(out);
      T* sum = sum_out ? MutableDataAs<T>(*sum_out) : nullptr;
      for (int64_t r = 0; r < rows; ++r) {
        const T* in = xp + r * size;
        const T* residual = skip + (r % skip_rows) * size;
        const auto row = [&](const auto& load) {
          const RowStats stats = centred_ ? Statistics<true>(size, epsilon_, load)
                                          : Statistics<false>(size, epsilon_, load);
          if (mean_out) mean_out[r] = static_cast<float>(stats.mean);
          if (inv_std_out) inv_std_out[r] = static_cast<float>(stats.inv_std);
          if (sum) StoreBlocked(sum + r * size, size, load);
          WriteRow(y + r * size, size, stats, load, gamma, beta, size);
        };
        using C = ComputeType<T>;
        if (bias) {
          row([in, residual, bias](int64_t i) {
            return static_cast<C>(in[i]) + static_cast<C>(residual[i]) + static_cast<C>(bias[i]);
          });
        } else {
          row([in, residual](int64_t i) {
            return static_cast<C>(in[i]) + static_cast<C>(residual[i]);
          });
        }
      }
    });
  }

 private:
  std::string op_;
  nxrt_dtype dtype_;
  float epsilon_;
  bool centred_;
};

// Claims when every tensor input present has input 0's float dtype.
sdk::ClaimResult ClaimSameFloatInputs(const sdk::Node& node,
                                      std::span<const nxrt_value_info> inputs, size_t required) {
  for (size_t i = 0; i < required; ++i) {
    if (auto reason = CheckInputDtype(node, inputs, i, FloatTypes{})) return ClaimUnless(reason);
  }
  for (size_t i = 1; i < inputs.size(); ++i) {
    if (inputs[i].kind != NXRT_VALUE_NONE && inputs[i].dtype != inputs[0].dtype) {
      return sdk::ClaimResult::Declined(std::string(node.op_type()) + ": input " +
                                        std::to_string(i) + " dtype " + DtypeName(inputs[i].dtype) +
                                        " differing from input 0's " + DtypeName(inputs[0].dtype) +
                                        " not implemented");
    }
  }
  return sdk::ClaimResult::Claimed();
}

sdk::ClaimResult ClaimRmsNorm(const sdk::Node& node, int64_t,
                              std::span<const nxrt_value_info> inputs) {
  if (node.output_count() > 1 && node.AttrInt("stash_type", 1) != 1) {
    return sdk::ClaimResult::Declined(std::string(node.op_type()) +
                                      ": inv_std_var output with stash_type other than float "
                                      "not implemented");
  }
  return ClaimSameFloatInputs(node, inputs, 2);
}

sdk::ClaimResult ClaimSkipNorm(const sdk::Node& node, int64_t,
                               std::span<const nxrt_value_info> inputs) {
  return ClaimSameFloatInputs(node, inputs, 3);
}

std::unique_ptr<CpuKernel> CreateRmsNorm(const sdk::Node& node, std::span<const nxrt_shape> inputs,
                                         int64_t) {
  return std::make_unique<RmsNormKernel>(std::string(node.op_type()), inputs[0].dtype,
                                         node.AttrInt("axis", -1), node.AttrFloat("epsilon", 1e-5f),
                                         node.output_count() > 1);
}

// ONNX Runtime's default epsilon for the skip forms.
constexpr float kSkipEpsilon = 1e-12f;

}  // namespace

void RegisterDecoderNormOps(OpRegistry& r) {
  r.Add("RMSNormalization", {23, ClaimRmsNorm, CreateRmsNorm});
  r.Add("SimplifiedLayerNormalization", {1, ClaimRmsNorm, CreateRmsNorm});
  r.Add("SkipSimplifiedLayerNormalization",
        {1, ClaimSkipNorm,
         [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
           return std::make_unique<SkipNormKernel>("SkipSimplifiedLayerNormalization",
                                                   inputs[0].dtype,
                                                   node.AttrFloat("epsilon", kSkipEpsilon), false);
         }},
        "com.microsoft");
  r.Add("SkipLayerNormalization",
        {1, ClaimSkipNorm,
         [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
           return std::make_unique<SkipNormKernel>("SkipLayerNormalization", inputs[0].dtype,
                                                   node.AttrFloat("epsilon", kSkipEpsilon), true);
         }},
        "com.microsoft");
}

}  // namespace nxrt::cpu
