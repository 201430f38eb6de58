// ConvInteger and QLinearConv: the convolution of 8-bit X and W minus their
// zero points, exactly in int32, on oneDNN's integer kernels
// (onednn/int8_convolution.hpp), with one to three spatial axes. ConvInteger
// returns the sums; QLinearConv adds its int32 bias, rescales per output map
// by x_scale * w_scale / y_scale (in float, as ONNX Runtime does), rounds
// half to even, adds y_zero and saturates.
//
// oneDNN takes int8 W with no zero point. A uint8 W is shifted by -128, its
// zero points with it, so a symmetric W of either type runs as one
// convolution, requantised inside oneDNN's kernel. Any other W zero point
// (one per map) is taken out afterwards: the sum over each window of
// (X - x_zero), which a second convolution with all-one weights gives per
// group, times the map's zero point.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "attention/kernel_support.hpp"
#include "cpu_kernel.hpp"
#include "onednn/int8_convolution.hpp"
#include "onednn/reference_notice.hpp"
#include "ops/conv_layout.hpp"
#include "ops/window_columns.hpp"
#include "quantized/saturating_round.hpp"

namespace nxrt::cpu {
namespace {

using Int8Types = TypeList<int8_t, uint8_t>;

// QLinearConv's inputs; ConvInteger has X, W and their zero points only.
enum QLinearInput : size_t {
  kX = 0,
  kXScale = 1,
  kXZero = 2,
  kW = 3,
  kWScale = 4,
  kWZero = 5,
  kYScale = 6,
  kYZero = 7,
  kBias = 8,
};

class IntegerConvKernel : public CpuKernel {
 public:
  IntegerConvKernel(const sdk::Host& host, const sdk::Node& node,
                    std::span<const nxrt_shape> inputs, bool qlinear)
      : CpuKernel(false),
        notice_host_(host),
        name_(NodeText(node)),
        qlinear_(qlinear),
        w_input_(qlinear ? size_t{kW} : 1),
        w_zero_input_(qlinear ? size_t{kWZero} : 3),
        x_dtype_(inputs[kX].dtype),
        w_dtype_(inputs[w_input_].dtype) {
    const Dims x(inputs[kX].dims, inputs[kX].dims + inputs[kX].rank);
    const Dims w(inputs[w_input_].dims, inputs[w_input_].dims + inputs[w_input_].rank);
    layout_ = ResolveConvLayout(node, x, w, name_);
    w_count_ = ElementCount(w);
    if (qlinear_) {
      y_dtype_ = inputs[kYZero].dtype;
      RequireElements(inputs, kBias, layout_.maps, name_, "B, one value per output map");
      for (size_t i : {kXScale, kXZero, kYScale, kYZero}) {
        RequireElements(inputs, i, 1, name_, "a scale or zero point per tensor");
      }
      const int64_t w_scales =
          ElementCount(std::span<const int64_t>(inputs[kWScale].dims, inputs[kWScale].rank));
      if (w_scales != 1 && w_scales != layout_.maps) {
        Fail("w_scale holds " + std::to_string(w_scales) + " values; give one, or one per map (" +
             std::to_string(layout_.maps) + ")");
      }
      per_map_scale_ = w_scales != 1;
      // Until the scales are known; W's layout does not depend on them.
      multipliers_.assign(per_map_scale_ ? layout_.maps : 1, 1.0f);
    }
    if (layout_.geometry.in.empty() || layout_.geometry.in.size() > 3) {
      FailUnsupported(name_ + ": " + std::to_string(layout_.geometry.in.size()) +
                      " spatial axes; 8-bit convolutions take 1 to 3");
    }
    where_ = "node " + name_ + " at X " + DimsText(x) + ", W " + DimsText(w);
  }

  // The plan is made here when W or the scales are constant: once, for the
  // scales it will run with when they are all constant.
  void PrepareConstantInputs(std::span<const nxrt_constant_input> constants) override {
    const nxrt_constant_input* w = nullptr;
    const float* scales[3] = {};  // x, w, y
    for (const nxrt_constant_input& c : constants) {
      if (c.input_index == w_input_) w = &c;
      if (!qlinear_ || c.dtype != NXRT_DTYPE_FLOAT32) continue;
      if (c.input_index == kXScale) scales[0] = static_cast<const float*>(c.bytes);
      if (c.input_index == kWScale) scales[1] = static_cast<const float*>(c.bytes);
      if (c.input_index == kYScale) scales[2] = static_cast<const float*>(c.bytes);
    }
    if (scales[0] && scales[1] && scales[2]) Multipliers(scales[0], scales[1], scales[2]);
    if (w != nullptr && w_count_ > 0 && ElementCount(layout_.out_dims) > 0) {
      EnsurePlan(nullptr);
      weights_ = plan_->PrepareWeights(SignedW(w->bytes));
    }
  }
  std::shared_ptr<sdk::SharedState> ShareableConstantState() override { return weights_; }
  // The weights' layout is checked against the plan when it is made.
  bool AdoptShareableConstantState(const std::shared_ptr<sdk::SharedState>& state) override {
    auto weights = std::dynamic_pointer_cast<onednn::PreparedWeights>(state);
    if (!weights || w_count_ == 0) return false;
    weights_ = std::move(weights);
    return true;
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& y = PrepareOutput(ctx, outputs, 0, y_dtype_, layout_.out_dims);
    const int64_t count = ElementCount(layout_.out_dims);
    if (count == 0) return;
    const int32_t x_zero = IsPresent(inputs, kXZero) ? ScalarZero(inputs[kXZero].tensor) : 0;
    const bool symmetric = ReadWZeros(inputs);
    const int32_t* bias =
        qlinear_ && IsPresent(inputs, kBias) ? DataAs<int32_t>(inputs[kBias].tensor) : nullptr;
    if (qlinear_) {
      Multipliers(DataAs<float>(inputs[kXScale].tensor), DataAs<float>(inputs[kWScale].tensor),
                  DataAs<float>(inputs[kYScale].tensor));
    }
    if (w_count_ == 0) {
      // An empty window sums to 0.
      sums_.assign(count, 0);
      if (qlinear_) {
        Requantize(inputs, bias, y);
      } else {
        std::fill_n(MutableDataAs<int32_t>(y), count, 0);
      }
      return;
    }
    const int8_t* w = weights_ ? nullptr : SignedW(inputs[w_input_].tensor.data);
    EnsurePlan(inputs[w_input_].tensor.data);
    if (symmetric) {
      plan_->Run(inputs[kX].tensor.data, x_zero, w, weights_.get(), bias,
                 qlinear_ ? ScalarZero(inputs[kYZero].tensor) : 0, y.data);
      return;
    }
    // Sums first, then the W zero points taken out, then requantised.
    int32_t* sums = MutableDataAs<int32_t>(y);
    if (qlinear_) {
      if (!sums_plan_) sums_plan_ = PlanFor(NXRT_DTYPE_INT32, {});
      sums_.resize(count);
      sums = sums_.data();
      // The requantised plan's weights are laid out for it alone.
      sums_plan_->Run(inputs[kX].tensor.data, x_zero, SignedW(inputs[w_input_].tensor.data),
                      nullptr, nullptr, 0, sums);
    } else {
      plan_->Run(inputs[kX].tensor.data, x_zero, w, weights_.get(), nullptr, 0, sums);
    }
    SubtractWindowSums(inputs[kX].tensor.data, x_zero, sums);
    if (qlinear_) Requantize(inputs, bias, y);
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const { FailInvalid(name_ + ": " + what); }

  // Makes plan_ unless it exists for multipliers_ (the sums' plan for
  // ConvInteger). Prepared weights laid out otherwise are prepared again
  // from `w` (W as given; null only before any is prepared).
  void EnsurePlan(const void* w) {
    if (plan_ && (!qlinear_ || plan_->scales() == multipliers_)) return;
    plan_ = PlanFor(y_dtype_, qlinear_ ? multipliers_ : std::vector<float>{});
    if (onednn::IsReference(plan_->implementation()) && !noted_reference_) {
      onednn::NoteReferenceKernel(notice_host_, where_, plan_->implementation());
      noted_reference_ = true;
    }
    if (weights_ && w != nullptr && !plan_->Takes(*weights_)) {
      weights_ = plan_->PrepareWeights(SignedW(w));
    }
  }

  // The plan to `y_dtype` with `scales` (empty for the sums), of `maps`
  // output maps (0: the node's).
  onednn::Int8Convolution PlanFor(nxrt_dtype y_dtype, const std::vector<float>& scales,
                                  int64_t maps = 0) const {
    onednn::ConvolutionShape shape{layout_.batch, layout_.channels, maps ? maps : layout_.maps,
                                   layout_.group, layout_.geometry};
    std::optional<onednn::Int8Convolution> plan =
        onednn::Int8Convolution::Plan({shape, x_dtype_, y_dtype, scales});
    if (!plan)
      Fail(
          "oneDNN has no 8-bit convolution for this shape (1 to 3 spatial axes); run the node "
          "on another provider");
    return *std::move(plan);
  }

  int32_t ScalarZero(const nxrt_tensor& t) const {
    if (ElementCount(t) != 1)
      Fail("x_zero_point and y_zero_point take one value; fix their shapes");
    return ByteValueAt(t, 0);
  }

  // W (of w_dtype_) as int8: itself, or a uint8 W shifted into a scratch copy.
  const int8_t* SignedW(const void* w) {
    if (w_dtype_ == NXRT_DTYPE_INT8) return static_cast<const int8_t*>(w);
    shifted_w_.resize(w_count_);
    const auto* given = static_cast<const uint8_t*>(w);
    for (int64_t i = 0; i < w_count_; ++i) shifted_w_[i] = static_cast<int8_t>(given[i] - 128);
    return shifted_w_.data();
  }

  // W's zero points, shifted as W is, into w_zeros_ (one per map); whether
  // they are all 0.
  bool ReadWZeros(std::span<const nxrt_value> inputs) {
    const int32_t shift = w_dtype_ == NXRT_DTYPE_UINT8 ? 128 : 0;
    w_zeros_.assign(layout_.maps, -shift);
    if (IsPresent(inputs, w_zero_input_)) {
      const nxrt_tensor& z = inputs[w_zero_input_].tensor;
      const int64_t given = ElementCount(z);
      if (given != 1 && given != layout_.maps) {
        Fail("w_zero_point holds " + std::to_string(given) + " values; give one, or one per map (" +
             std::to_string(layout_.maps) + ")");
      }
      for (int64_t m = 0; m < layout_.maps; ++m) {
        w_zeros_[m] = ByteValueAt(z, given == 1 ? 0 : m) - shift;
      }
    }
    return std::all_of(w_zeros_.begin(), w_zeros_.end(), [](int32_t z) { return z == 0; });
  }

  // x_scale * w_scale / y_scale per map into multipliers_.
  void Multipliers(const float* x_scale, const float* w_scale, const float* y_scale) {
    for (size_t m = 0; m < multipliers_.size(); ++m) {
      multipliers_[m] = *x_scale * w_scale[m] / *y_scale;
    }
  }

  // sums[n, m, ...] -= w_zeros_[m] * sum over the window of (X - x_zero),
  // the window sums coming per group from a convolution with all-one W.
  void SubtractWindowSums(const void* x, int32_t x_zero, int32_t* sums) {
    const int64_t group = layout_.group;
    if (!window_sums_plan_) {
      window_sums_plan_ = PlanFor(NXRT_DTYPE_INT32, {}, group);
      ones_ = window_sums_plan_->PrepareWeights(
          std::vector<int8_t>(w_count_ / layout_.maps * group, 1).data());
    }
    const int64_t plane = ElementCount(layout_.geometry.out);
    window_sums_.resize(layout_.batch * group * plane);
    window_sums_plan_->Run(x, x_zero, nullptr, ones_.get(), nullptr, 0, window_sums_.data());
    const int64_t group_maps = layout_.maps / group;
    for (int64_t n = 0; n < layout_.batch; ++n) {
      for (int64_t m = 0; m < layout_.maps; ++m) {
        const int32_t zero = w_zeros_[m];
        if (zero == 0) continue;
        int32_t* out = sums + (n * layout_.maps + m) * plane;
        const int32_t* window = window_sums_.data() + (n * group + m / group_maps) * plane;
        for (int64_t i = 0; i < plane; ++i) out[i] -= zero * window[i];
      }
    }
  }

  void Requantize(std::span<const nxrt_value> inputs, const int32_t* bias, nxrt_tensor& y) {
    const int64_t plane = ElementCount(layout_.geometry.out);
    Dispatch(Int8Types{}, y_dtype_, "QLinearConv", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const float zero = static_cast<float>(ScalarZero(inputs[kYZero].tensor));
      T* out = MutableDataAs<T>(y);
      for (int64_t n = 0; n < layout_.batch; ++n) {
        for (int64_t m = 0; m < layout_.maps; ++m) {
          const int64_t at = (n * layout_.maps + m) * plane;
          const int32_t b = bias ? bias[m] : 0;
          const float multiplier = multipliers_[per_map_scale_ ? m : 0];
          RequantizeRun(sums_.data() + at, b, multiplier, zero, plane, out + at);
        }
      }
    });
  }

  sdk::Host notice_host_;  // kept, as the SDK keeps it, for the reference-kernel notice
  std::string name_;
  std::string where_;  // the node and its shapes, for the reference-kernel notice
  bool noted_reference_ = false;
  bool qlinear_;
  size_t w_input_;
  size_t w_zero_input_;
  nxrt_dtype x_dtype_;
  nxrt_dtype w_dtype_;
  nxrt_dtype y_dtype_ = NXRT_DTYPE_INT32;
  bool per_map_scale_ = false;
  ConvLayout layout_;
  int64_t w_count_ = 0;
  std::optional<onednn::Int8Convolution> plan_;       // none when X, W or Y is empty
  std::shared_ptr<onednn::PreparedWeights> weights_;  // a constant W, prepared for plan_
  std::optional<onednn::Int8Convolution> sums_plan_;  // QLinearConv's, for asymmetric W
  std::optional<onednn::Int8Convolution> window_sums_plan_;
  std::shared_ptr<onednn::PreparedWeights> ones_;  // all-one W for window_sums_plan_
  std::vector<int8_t> shifted_w_;
  std::vector<int32_t> w_zeros_;
  std::vector<float> multipliers_;
  std::vector<int32_t> sums_;
  std::vector<int32_t> window_sums_;
};

}  // namespace

void RegisterIntegerConvOps(OpRegistry& r) {
  r.Add("ConvInteger",
        {10, ClaimConv(Int8Types{}),
         [](const sdk::Host& host, const sdk::Node& node, std::span<const nxrt_shape> inputs,
            int64_t) { return std::make_unique<IntegerConvKernel>(host, node, inputs, false); }});
  r.Add("QLinearConv",
        {10,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           std::optional<std::string> reason = CheckAutoPad(node);
           if (!reason) reason = CheckInputDtype(node, inputs, kX, Int8Types{});
           if (!reason) reason = CheckInputDtype(node, inputs, kW, Int8Types{});
           if (!reason) reason = CheckInputDtype(node, inputs, kXScale, TypeList<float>{});
           if (!reason) reason = CheckInputDtype(node, inputs, kYZero, Int8Types{});
           return ClaimUnless(reason);
         },
         [](const sdk::Host& host, const sdk::Node& node, std::span<const nxrt_shape> inputs,
            int64_t) { return std::make_unique<IntegerConvKernel>(host, node, inputs, true); }});
}

}  // namespace nxrt::cpu
