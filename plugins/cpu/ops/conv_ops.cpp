// Conv for float, double and (through float) the 16-bit floats, any number
// of spatial axes, with groups, pads, strides, dilations and auto_pad
// (ConvTranspose is conv_transpose_ops.cpp); ConvInteger and QLinearConv run the
// double Conv on zero-point-shifted 8-bit data (exact: every partial sum is an
// integer far below 2^53), QLinearConv then requantising. A float 1x1 Conv
// is a product serving every image size (ops/pointwise_conv.hpp); another
// with one to three spatial axes runs on oneDNN (onednn/float_convolution.hpp),
// its constant weights prepared once and shared between shape variants; the
// others lower each image and group to im2col (a row-wise path for 2-D) + one
// GEMM. Buffers are sized when the kernel is made, so compute allocates
// nothing.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <optional>

#include "cpu_kernel.hpp"
#include "onednn/float_convolution.hpp"
#include "onednn/reference_notice.hpp"
#include "ops/pointwise_conv.hpp"
#include "ops/window_columns.hpp"
#include "window_geometry.hpp"

namespace nxrt::cpu {
namespace {

class ConvKernel : public CpuKernel {
 public:
  ConvKernel(const sdk::Host& host, const sdk::Node& node, std::span<const nxrt_shape> inputs)
      : CpuKernel(false),
        dtype_(inputs[0].dtype),
        group_(node.AttrInt("group", 1)),
        relu_(node.op_type() == "FusedConv") {
    const Dims x(inputs[0].dims, inputs[0].dims + inputs[0].rank);
    const Dims w(inputs[1].dims, inputs[1].dims + inputs[1].rank);
    if (x.size() < 3 || w.size() != x.size()) FailInvalid("Conv: X and W need rank 3 or more");
    WindowAttributes attributes = WindowAttributes::Read(node);
    const Dims kernel(w.begin() + 2, w.end());
    geometry_ = ResolveWindow(attributes, Dims(x.begin() + 2, x.end()), kernel, "Conv");
    batch_ = x[0];
    channels_ = x[1];
    maps_ = w[0];
    if (group_ < 1) FailInvalid("Conv: group must be positive; fix the group attribute");
    if (channels_ % group_ != 0 || maps_ % group_ != 0 || w[1] * group_ != channels_) {
      FailInvalid("Conv: channels do not split into groups");
    }
    RequireElements(inputs, 2, maps_, "Conv", "B, one value per output map");
    out_dims_ = {batch_, maps_};
    out_dims_.insert(out_dims_.end(), geometry_.out.begin(), geometry_.out.end());
    if (dtype_ != NXRT_DTYPE_FLOAT64 && ElementCount(out_dims_) > 0 && ElementCount(w) > 0) {
      const bool bias = inputs.size() > 2 && inputs[2].dtype != NXRT_DTYPE_UNDEFINED;
      onednn_ = onednn::FloatConvolution::Plan(
          {batch_, channels_, maps_, group_, geometry_, bias, relu_});
      if (onednn_ && onednn::IsReference(onednn_->implementation())) {
        onednn::NoteReferenceKernel(host,
                                    "node '" + std::string(node.name()) + "' (" +
                                        std::string(node.op_type()) + ") at X " + DimsText(x) +
                                        ", W " + DimsText(w),
                                    onednn_->implementation());
      }
    }
    if (!onednn_) {
      const int64_t rows = (channels_ / group_) * ElementCount(kernel);
      columns_.resize(rows * ElementCount(geometry_.out) * (dtype_ == NXRT_DTYPE_FLOAT64 ? 2 : 1));
    }
    if (dtype_ == NXRT_DTYPE_FLOAT16 || dtype_ == NXRT_DTYPE_BFLOAT16) {
      wide_x_.resize(ElementCount(x));
      wide_w_.resize(ElementCount(w));
      wide_bias_.resize(maps_);
      wide_y_.resize(ElementCount(out_dims_));
    }
  }

  void PrepareConstantInputs(std::span<const nxrt_constant_input> constants) override {
    for (const nxrt_constant_input& c : constants) {
      if (c.input_index != 1 || !onednn_) continue;
      if (dtype_ == NXRT_DTYPE_FLOAT32) {
        weights_ = onednn_->PrepareWeights(static_cast<const float*>(c.bytes));
      } else {
        Dispatch(TypeList<Float16, BFloat16>{}, dtype_, "Conv", [&](auto tag) {
          using T = typename decltype(tag)::type;
          std::copy_n(static_cast<const T*>(c.bytes), wide_w_.size(), wide_w_.begin());
        });
        weights_ = onednn_->PrepareWeights(wide_w_.data());
      }
    }
  }
  std::shared_ptr<sdk::SharedState> ShareableConstantState() override { return weights_; }
  // Compute allocates nothing on oneDNN with prepared weights, or through the
  // row-wise 2-D im2col; the general window walk keeps counters on the heap.
  bool CaptureSafe() const override {
    return onednn_ ? weights_ != nullptr : geometry_.in.size() == 2;
  }
  bool AdoptShareableConstantState(const std::shared_ptr<sdk::SharedState>& state) override {
    auto weights = std::dynamic_pointer_cast<onednn::PreparedWeights>(state);
    if (!weights || !onednn_ || !onednn_->Takes(*weights)) return false;
    weights_ = std::move(weights);
    return true;
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, out_dims_);
    if (ElementCount(out_dims_) == 0) return;
    const bool has_bias = IsPresent(inputs, 2);
    if (dtype_ == NXRT_DTYPE_FLOAT64) {
      Run(DataAs<double>(inputs[0].tensor), DataAs<double>(inputs[1].tensor),
          has_bias ? DataAs<double>(inputs[2].tensor) : nullptr, MutableDataAs<double>(out));
    } else if (dtype_ == NXRT_DTYPE_FLOAT32) {
      Run(DataAs<float>(inputs[0].tensor), DataAs<float>(inputs[1].tensor),
          has_bias ? DataAs<float>(inputs[2].tensor) : nullptr, MutableDataAs<float>(out));
    } else {
      // The 16-bit floats run the float GEMM on widened copies.
      Dispatch(TypeList<Float16, BFloat16>{}, dtype_, "Conv", [&](auto tag) {
        using T = typename decltype(tag)::type;
        auto widen = [](const nxrt_tensor& t, std::vector<float>& to) {
          std::copy_n(DataAs<T>(t), to.size(), to.begin());
        };
        widen(inputs[0].tensor, wide_x_);
        if (!weights_) widen(inputs[1].tensor, wide_w_);
        if (has_bias) widen(inputs[2].tensor, wide_bias_);
        Run(wide_x_.data(), wide_w_.data(), has_bias ? wide_bias_.data() : nullptr, wide_y_.data());
        std::transform(wide_y_.begin(), wide_y_.end(), MutableDataAs<T>(out),
                       [](float v) { return static_cast<T>(v); });
      });
    }
  }

  const Dims& out_dims() const { return out_dims_; }

 private:
  template <typename T>
  void Run(const T* x, const T* w, const T* bias, T* y) {
    if constexpr (std::is_same_v<T, float>) {
      if (onednn_) {
        onednn_->Run(x, w, weights_.get(), bias, y);
        return;
      }
    }
    T* columns = reinterpret_cast<T*>(columns_.data());
    const int64_t group_channels = channels_ / group_;
    const int64_t group_maps = maps_ / group_;
    const int64_t in_size = ElementCount(geometry_.in);
    const int64_t out_size = ElementCount(geometry_.out);
    const int64_t rows = group_channels * ElementCount(geometry_.kernel);
    for (int64_t n = 0; n < batch_; ++n) {
      for (int64_t g = 0; g < group_; ++g) {
        const T* image = x + (n * channels_ + g * group_channels) * in_size;
        if (geometry_.in.size() == 2) {
          Im2Col2d(geometry_, group_channels, image, columns);
        } else {
          WalkWindows(geometry_, group_channels, [&](int64_t row, int64_t col, int64_t offset) {
            columns[row * out_size + col] = offset < 0 ? T(0) : image[offset];
          });
        }
        T* dst = y + (n * maps_ + g * group_maps) * out_size;
        Gemm(false, false, group_maps, out_size, rows, w + g * group_maps * rows, columns, T(0),
             dst);
      }
      if (bias) {
        for (int64_t m = 0; m < maps_; ++m) {
          T* plane = y + (n * maps_ + m) * out_size;
          for (int64_t i = 0; i < out_size; ++i) plane[i] += bias[m];
        }
      }
    }
    if (relu_) {
      T* end = y + batch_ * maps_ * out_size;
      for (T* v = y; v < end; ++v) *v = *v < T(0) ? T(0) : *v;  // NaN stays NaN
    }
  }

  nxrt_dtype dtype_;
  int64_t group_;
  bool relu_;  // com.microsoft FusedConv with activation Relu
  WindowGeometry geometry_;
  int64_t batch_ = 0;
  int64_t channels_ = 0;
  int64_t maps_ = 0;
  Dims out_dims_;
  std::optional<onednn::FloatConvolution> onednn_;
  std::shared_ptr<onednn::PreparedWeights> weights_;  // constant W, prepared for onednn_
  std::vector<float> columns_;                        // im2col's; doubles take two floats each
  // Float copies of 16-bit float operands and result.
  std::vector<float> wide_x_, wide_w_, wide_bias_, wide_y_;
};

// ConvInteger (int32 out), or QLinearConv when `qlinear`: the int32 bias
// added, then rescaled per output map by x_scale * w_scale / y_scale, rounded
// half to even, shifted by y_zero and saturated.
class ConvIntegerKernel : public CpuKernel {
 public:
  ConvIntegerKernel(const sdk::Host& host, const sdk::Node& node,
                    std::span<const nxrt_shape> inputs, bool qlinear)
      : CpuKernel(false),
        qlinear_(qlinear),
        w_input_(qlinear ? 3 : 1),
        x_dims_(inputs[0].dims, inputs[0].dims + inputs[0].rank),
        w_dims_(inputs[w_input_].dims, inputs[w_input_].dims + inputs[w_input_].rank) {
    const std::vector<nxrt_shape> as_double{
        {sizeof(nxrt_shape), NXRT_DTYPE_FLOAT64, x_dims_.size(), x_dims_.data()},
        {sizeof(nxrt_shape), NXRT_DTYPE_FLOAT64, w_dims_.size(), w_dims_.data()}};
    conv_ = std::make_unique<ConvKernel>(host, node, as_double);
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const std::vector<double> x = Shifted(inputs, 0, 2, 1);
    const int64_t maps = w_dims_[0];
    const std::vector<double> w = Shifted(inputs, w_input_, qlinear_ ? 5 : 3, maps);
    std::vector<nxrt_value> shifted(2);
    const Dims* dims[2] = {&x_dims_, &w_dims_};
    const std::vector<double>* data[2] = {&x, &w};
    for (size_t i = 0; i < 2; ++i) {
      shifted[i].struct_size = sizeof(nxrt_value);
      shifted[i].kind = NXRT_VALUE_TENSOR;
      shifted[i].tensor = {sizeof(nxrt_tensor),
                           NXRT_DTYPE_FLOAT64,
                           NXRT_MEMORY_HOST,
                           dims[i]->size(),
                           dims[i]->data(),
                           const_cast<double*>(data[i]->data()),
                           data[i]->size() * sizeof(double)};
    }
    const Dims& out_dims = conv_->out_dims();
    std::vector<double> result(ElementCount(out_dims));
    nxrt_value out{};
    out.struct_size = sizeof(out);
    out.kind = NXRT_VALUE_TENSOR;
    out.tensor = {sizeof(nxrt_tensor),
                  NXRT_DTYPE_FLOAT64,
                  NXRT_MEMORY_HOST,
                  out_dims.size(),
                  out_dims.data(),
                  result.data(),
                  result.size() * sizeof(double)};
    conv_->Compute(ctx, shifted, std::span<nxrt_value>(&out, 1));
    if (qlinear_) {
      Requantize(ctx, inputs, outputs, result, maps);
      return;
    }
    int32_t* y = MutableDataAs<int32_t>(PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_INT32, out_dims));
    for (size_t i = 0; i < result.size(); ++i) y[i] = static_cast<int32_t>(std::llround(result[i]));
  }

 private:
  // Input `index` minus its zero point (input `zero`: a scalar, or one per
  // leading-axis slice when it has `per_slice` entries).
  std::vector<double> Shifted(std::span<const nxrt_value> inputs, size_t index, size_t zero,
                              int64_t per_slice) const {
    const nxrt_tensor& t = inputs[index].tensor;
    const int64_t count = ElementCount(t);
    std::vector<double> zeros{0.0};
    if (IsPresent(inputs, zero) && ElementCount(inputs[zero].tensor) > 0) {
      zeros.clear();
      const nxrt_tensor& z = inputs[zero].tensor;
      for (int64_t i = 0; i < ElementCount(z); ++i) {
        zeros.push_back(z.dtype == NXRT_DTYPE_UINT8 ? DataAs<uint8_t>(z)[i] : DataAs<int8_t>(z)[i]);
      }
    }
    if (zeros.size() != 1 && static_cast<int64_t>(zeros.size()) != per_slice) {
      FailInvalid(std::string(qlinear_ ? "QLinearConv" : "ConvInteger") + ": a zero point holds " +
                  std::to_string(zeros.size()) + " values; it takes one, or one per " +
                  (per_slice == 1 ? "tensor" : "output map") + " (" + std::to_string(per_slice) +
                  ")");
    }
    const int64_t slices = zeros.size() == 1 ? 1 : per_slice;
    const int64_t slice = count / std::max<int64_t>(slices, 1);
    std::vector<double> v(count);
    for (int64_t i = 0; i < count; ++i) {
      const double raw = t.dtype == NXRT_DTYPE_UINT8 ? DataAs<uint8_t>(t)[i] : DataAs<int8_t>(t)[i];
      v[i] = raw - zeros[zeros.size() == 1 ? 0 : i / slice];
    }
    return v;
  }

  void Requantize(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
                  std::span<nxrt_value> outputs, const std::vector<double>& result, int64_t maps) {
    const nxrt_tensor& w_scale = inputs[4].tensor;
    const int64_t w_scales = ElementCount(w_scale);
    if (w_scales != 1 && w_scales != maps) FailInvalid("QLinearConv: w_scale per tensor or map");
    for (size_t i : {size_t{1}, size_t{6}, size_t{7}}) {
      if (ElementCount(inputs[i].tensor) != 1) {
        FailInvalid("QLinearConv: input " + std::to_string(i) +
                    " (x_scale, y_scale, y_zero_point) holds " +
                    std::to_string(ElementCount(inputs[i].tensor)) + " values; it is one");
      }
    }
    if (IsPresent(inputs, 8) && ElementCount(inputs[8].tensor) != maps) {
      FailInvalid("QLinearConv: the bias holds " + std::to_string(ElementCount(inputs[8].tensor)) +
                  " values for " + std::to_string(maps) + " output maps");
    }
    const float x_scale = *DataAs<float>(inputs[1].tensor);
    const float y_scale = *DataAs<float>(inputs[6].tensor);
    const nxrt_tensor& y_zero = inputs[7].tensor;
    const int32_t* bias = IsPresent(inputs, 8) ? DataAs<int32_t>(inputs[8].tensor) : nullptr;
    const Dims& out_dims = conv_->out_dims();
    const int64_t plane = ElementCount(out_dims) / std::max<int64_t>(out_dims[0] * maps, 1);
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, y_zero.dtype, out_dims);
    Dispatch(TypeList<int8_t, uint8_t>{}, y_zero.dtype, "QLinearConv", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const double offset = *DataAs<T>(y_zero);
      T* y = MutableDataAs<T>(out);
      for (size_t i = 0; i < result.size(); ++i) {
        const int64_t map = static_cast<int64_t>(i) / plane % maps;
        const float multiplier =
            x_scale * DataAs<float>(w_scale)[w_scales == 1 ? 0 : map] / y_scale;
        const double acc = result[i] + (bias ? bias[map] : 0);
        const double v = std::nearbyint(acc * multiplier) + offset;
        y[i] = static_cast<T>(
            std::clamp<double>(v, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
      }
    });
  }

  bool qlinear_;
  size_t w_input_;
  Dims x_dims_;
  Dims w_dims_;
  std::unique_ptr<ConvKernel> conv_;
};

// A pointwise float convolution's kernel serves every image size; the
// others are planned for their shape.
std::unique_ptr<CpuKernel> MakeConv(const sdk::Host& host, const sdk::Node& node,
                                    std::span<const nxrt_shape> inputs, bool relu) {
  if (std::unique_ptr<CpuKernel> pointwise = MakePointwiseConv(node, inputs, relu)) {
    return pointwise;
  }
  return std::make_unique<ConvKernel>(host, node, inputs);
}

}  // namespace

void RegisterConvOps(OpRegistry& r) {
  r.Add("Conv",
        {1, ClaimConv(FloatTypes{}),
         [](const sdk::Host& host, const sdk::Node& node, std::span<const nxrt_shape> inputs,
            int64_t) { return MakeConv(host, node, inputs, false); }});
  // ONNX Runtime's contrib op, which the host also fuses a Conv and its Relu
  // into: the activation runs on the convolution's result before it is
  // stored.
  r.Add("FusedConv",
        {1,
         [](const sdk::Node& node, int64_t opset, std::span<const nxrt_value_info> inputs) {
           const std::string activation = node.AttrString("activation", "");
           if (activation != "Relu") {
             return sdk::ClaimResult::Declined("FusedConv: activation '" + activation +
                                               "' not implemented (Relu is)");
           }
           if (inputs.size() > 3 && inputs[3].kind != NXRT_VALUE_NONE) {
             return sdk::ClaimResult::Declined("FusedConv: the Z input (a sum) not implemented");
           }
           return ClaimConv(FloatTypes{})(node, opset, inputs);
         },
         [](const sdk::Host& host, const sdk::Node& node, std::span<const nxrt_shape> inputs,
            int64_t) { return MakeConv(host, node, inputs, true); }},
        "com.microsoft");
  r.Add("ConvInteger",
        {10, ClaimConv(TypeList<int8_t, uint8_t>{}),
         [](const sdk::Host& host, const sdk::Node& node, std::span<const nxrt_shape> inputs,
            int64_t) { return std::make_unique<ConvIntegerKernel>(host, node, inputs, false); }});
  r.Add("QLinearConv",
        {10,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           using Int8Types = TypeList<int8_t, uint8_t>;
           std::optional<std::string> reason = CheckAutoPad(node);
           if (!reason) reason = CheckInputDtype(node, inputs, 0, Int8Types{});
           if (!reason) reason = CheckInputDtype(node, inputs, 3, Int8Types{});
           if (!reason) reason = CheckInputDtype(node, inputs, 1, TypeList<float>{});
           return ClaimUnless(reason);
         },
         [](const sdk::Host& host, const sdk::Node& node, std::span<const nxrt_shape> inputs,
            int64_t) { return std::make_unique<ConvIntegerKernel>(host, node, inputs, true); }});
}

}  // namespace nxrt::cpu
