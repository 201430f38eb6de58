// The sampling ops: RandomUniform, RandomNormal (of a given shape),
// RandomUniformLike, RandomNormalLike (of an input's shape), Bernoulli and
// Multinomial, each drawing from its SamplingKernel's generator.
#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>

#include "sampling_kernel.hpp"

namespace nxrt::cpu {
namespace {

using RealTypes = TypeList<float, double, Float16, BFloat16>;

// The dtype a sampling op's output takes: its `dtype` attribute when set,
// else `fallback`.
nxrt_dtype OutputDtype(const sdk::Node& node, nxrt_dtype fallback) {
  return node.attr_type("dtype") != NXRT_ATTR_UNDEFINED ? AttrDtype(node, "dtype", 0) : fallback;
}

enum class Distribution { kUniform, kNormal };

// RandomUniform / RandomNormal and their Like forms: `count` draws of
// low + (high - low) * U[0, 1) or mean + scale * N(0, 1), in double, stored
// as the output type.
class RandomKernel : public SamplingKernel {
 public:
  RandomKernel(const sdk::Node& node, Distribution distribution, nxrt_dtype dtype,
               std::optional<Dims> dims)
      : SamplingKernel(node),
        distribution_(distribution),
        dtype_(dtype),
        dims_(std::move(dims)),
        // The uniform bounds and the normal parameters share two slots.
        a_(distribution == Distribution::kUniform ? node.AttrFloat("low", 0.0f)
                                                  : node.AttrFloat("mean", 0.0f)),
        b_(distribution == Distribution::kUniform ? node.AttrFloat("high", 1.0f)
                                                  : node.AttrFloat("scale", 1.0f)) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const Dims dims = dims_ ? *dims_ : DimsOf(inputs[0].tensor);
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, dims);
    const int64_t count = ElementCount(dims);
    Dispatch(RealTypes{}, dtype_, "random output", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* y = MutableDataAs<T>(out);
      if (distribution_ == Distribution::kUniform) {
        std::uniform_real_distribution<double> uniform(a_, b_);
        for (int64_t i = 0; i < count; ++i) y[i] = static_cast<T>(uniform(engine_));
      } else if (b_ > 0) {
        std::normal_distribution<double> normal(a_, b_);
        for (int64_t i = 0; i < count; ++i) y[i] = static_cast<T>(normal(engine_));
      } else {
        std::fill_n(y, count, static_cast<T>(a_));  // scale 0: every draw is the mean
      }
    });
  }

 private:
  Distribution distribution_;
  nxrt_dtype dtype_;
  std::optional<Dims> dims_;  // null: the input's
  double a_;
  double b_;
};

// Bernoulli: 1 where a draw of U[0, 1) falls below the input's probability.
class BernoulliKernel : public SamplingKernel {
 public:
  BernoulliKernel(const sdk::Node& node, nxrt_dtype in_dtype, nxrt_dtype out_dtype)
      : SamplingKernel(node), in_dtype_(in_dtype), out_dtype_(out_dtype) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& p = inputs[0].tensor;
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, out_dtype_, DimsSpan(p));
    const int64_t count = ElementCount(p);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    Dispatch(RealTypes{}, in_dtype_, "Bernoulli", [&](auto in_tag) {
      using In = typename decltype(in_tag)::type;
      const In* probabilities = DataAs<In>(p);
      Dispatch(AllTypes{}, out_dtype_, "Bernoulli", [&](auto out_tag) {
        using Out = typename decltype(out_tag)::type;
        Out* y = MutableDataAs<Out>(out);
        for (int64_t i = 0; i < count; ++i) {
          const bool one = uniform(engine_) < static_cast<double>(probabilities[i]);
          if constexpr (std::is_same_v<Out, Float16> || std::is_same_v<Out, BFloat16>) {
            y[i] = Out(one ? 1.0f : 0.0f);
          } else {
            y[i] = static_cast<Out>(one);
          }
        }
      });
    });
  }

 private:
  nxrt_dtype in_dtype_;
  nxrt_dtype out_dtype_;
};

// Multinomial: `sample_size` class indices per batch row, drawn from the
// softmax of the row's unnormalised log-probabilities.
class MultinomialKernel : public SamplingKernel {
 public:
  MultinomialKernel(const sdk::Node& node, nxrt_dtype in_dtype, nxrt_dtype out_dtype)
      : SamplingKernel(node),
        in_dtype_(in_dtype),
        out_dtype_(out_dtype),
        samples_(node.AttrInt("sample_size", 1)) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& logits = inputs[0].tensor;
    if (logits.rank != 2) {
      FailInvalid("Multinomial: input must be [batch_size, class_size]; got " +
                  DimsText(DimsSpan(logits)));
    }
    const int64_t batch = logits.dims[0];
    const int64_t classes = logits.dims[1];
    if (classes == 0 && batch > 0 && samples_ > 0) {
      FailInvalid("Multinomial: no class to draw from");
    }
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, out_dtype_, Dims{batch, samples_});
    cumulative_.resize(static_cast<size_t>(classes));
    Dispatch(RealTypes{}, in_dtype_, "Multinomial", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = DataAs<T>(logits);
      for (int64_t b = 0; b < batch; ++b) {
        const T* row = x + b * classes;
        double max = -INFINITY;
        for (int64_t c = 0; c < classes; ++c) max = std::max(max, static_cast<double>(row[c]));
        double total = 0;
        for (int64_t c = 0; c < classes; ++c) {
          total += std::exp(static_cast<double>(row[c]) - max);
          cumulative_[c] = total;
        }
        std::uniform_real_distribution<double> uniform(0.0, total);
        for (int64_t s = 0; s < samples_; ++s) {
          const double draw = uniform(engine_);
          const auto hit = std::upper_bound(cumulative_.begin(), cumulative_.end(), draw);
          const int64_t index = std::min<int64_t>(hit - cumulative_.begin(), classes - 1);
          Store(out, b * samples_ + s, index);
        }
      }
    });
  }

 private:
  void Store(nxrt_tensor& out, int64_t at, int64_t index) const {
    if (out_dtype_ == NXRT_DTYPE_INT32) {
      MutableDataAs<int32_t>(out)[at] = static_cast<int32_t>(index);
    } else {
      MutableDataAs<int64_t>(out)[at] = index;
    }
  }

  nxrt_dtype in_dtype_;
  nxrt_dtype out_dtype_;
  int64_t samples_;
  std::vector<double> cumulative_;
};

sdk::ClaimResult DeclineOutputDtype(const std::string& op, nxrt_dtype dtype) {
  return sdk::ClaimResult::Declined(op + ": output dtype " + DtypeName(dtype) + " not implemented");
}

// A range or scale the draws cannot come from.
std::optional<std::string> CheckParameters(const std::string& op, const sdk::Node& node) {
  if (op.starts_with("RandomUniform")) {
    const float low = node.AttrFloat("low", 0.0f);
    const float high = node.AttrFloat("high", 1.0f);
    if (!(low <= high) || !std::isfinite(high - low)) {
      return op + ": low " + std::to_string(low) + " and high " + std::to_string(high) +
             " are no finite range; give low <= high";
    }
  } else {
    const float scale = node.AttrFloat("scale", 1.0f);
    if (!(scale >= 0.0f) || !std::isfinite(scale)) {
      return op + ": scale " + std::to_string(scale) + " must be finite and not negative";
    }
  }
  return std::nullopt;
}

// RandomUniform and RandomNormal: a `shape` attribute and a real dtype.
ClaimFn ClaimShaped(const char* op) {
  return [op](const sdk::Node& node, int64_t, std::span<const nxrt_value_info>) {
    if (auto reason = CheckParameters(op, node)) return sdk::ClaimResult::Declined(*reason);
    if (node.attr_type("shape") != NXRT_ATTR_INTS) {
      return sdk::ClaimResult::Declined(std::string(op) + ": the shape attribute is required");
    }
    for (int64_t d : node.AttrInts("shape")) {
      if (d < 0) return sdk::ClaimResult::Declined(std::string(op) + ": shape has a negative dim");
    }
    const nxrt_dtype dtype = OutputDtype(node, NXRT_DTYPE_FLOAT32);
    return Contains(RealTypes{}, dtype) ? sdk::ClaimResult::Claimed()
                                        : DeclineOutputDtype(op, dtype);
  };
}

ClaimFn ClaimLike(const char* op) {
  return [op](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
    if (auto reason = CheckParameters(op, node)) return sdk::ClaimResult::Declined(*reason);
    if (inputs.empty() || inputs[0].kind != NXRT_VALUE_TENSOR) {
      return sdk::ClaimResult::Declined(std::string(op) + ": input must be a tensor");
    }
    const nxrt_dtype dtype = OutputDtype(node, inputs[0].dtype);
    return Contains(RealTypes{}, dtype) ? sdk::ClaimResult::Claimed()
                                        : DeclineOutputDtype(op, dtype);
  };
}

sdk::ClaimResult ClaimBernoulli(const sdk::Node& node, int64_t,
                                std::span<const nxrt_value_info> inputs) {
  if (auto reason = CheckInputDtype(node, inputs, 0, RealTypes{})) {
    return sdk::ClaimResult::Declined(*reason);
  }
  const nxrt_dtype dtype = OutputDtype(node, inputs[0].dtype);
  return Contains(AllTypes{}, dtype) ? sdk::ClaimResult::Claimed()
                                     : DeclineOutputDtype("Bernoulli", dtype);
}

sdk::ClaimResult ClaimMultinomial(const sdk::Node& node, int64_t,
                                  std::span<const nxrt_value_info> inputs) {
  if (auto reason = CheckInputDtype(node, inputs, 0, RealTypes{})) {
    return sdk::ClaimResult::Declined(*reason);
  }
  if (node.AttrInt("sample_size", 1) < 0) {
    return sdk::ClaimResult::Declined("Multinomial: sample_size must not be negative");
  }
  const nxrt_dtype dtype = OutputDtype(node, NXRT_DTYPE_INT32);
  return dtype == NXRT_DTYPE_INT32 || dtype == NXRT_DTYPE_INT64
             ? sdk::ClaimResult::Claimed()
             : DeclineOutputDtype("Multinomial", dtype);
}

}  // namespace

void RegisterRandomOps(OpRegistry& r) {
  r.Add("RandomUniform", {1, ClaimShaped("RandomUniform"),
                          [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
                            return std::make_unique<RandomKernel>(
                                node, Distribution::kUniform, OutputDtype(node, NXRT_DTYPE_FLOAT32),
                                node.AttrInts("shape"));
                          }});
  r.Add("RandomNormal", {1, ClaimShaped("RandomNormal"),
                         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
                           return std::make_unique<RandomKernel>(
                               node, Distribution::kNormal, OutputDtype(node, NXRT_DTYPE_FLOAT32),
                               node.AttrInts("shape"));
                         }});
  r.Add("RandomUniformLike",
        {1, ClaimLike("RandomUniformLike"),
         [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
           return std::make_unique<RandomKernel>(node, Distribution::kUniform,
                                                 OutputDtype(node, inputs[0].dtype), std::nullopt);
         }});
  r.Add("RandomNormalLike",
        {1, ClaimLike("RandomNormalLike"),
         [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
           return std::make_unique<RandomKernel>(node, Distribution::kNormal,
                                                 OutputDtype(node, inputs[0].dtype), std::nullopt);
         }});
  r.Add("Bernoulli", {15, ClaimBernoulli,
                      [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
                        return std::make_unique<BernoulliKernel>(
                            node, inputs[0].dtype, OutputDtype(node, inputs[0].dtype));
                      }});
  r.Add("Multinomial", {7, ClaimMultinomial,
                        [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
                          return std::make_unique<MultinomialKernel>(
                              node, inputs[0].dtype, OutputDtype(node, NXRT_DTYPE_INT32));
                        }});
}

}  // namespace nxrt::cpu
