// Conv for float, double and (through float) the 16-bit floats, any number
// of spatial axes, with groups, pads, strides, dilations and auto_pad
// (ConvTranspose is conv_transpose_ops.cpp, the 8-bit ConvInteger and
// QLinearConv integer_conv_ops.cpp). A float 1x1 Conv
// is a product serving every image size (ops/pointwise_conv.hpp), and one
// along a single axis an unrolled window and that product, serving every
// length (ops/unrolled_conv.hpp); another with one to three spatial axes runs on oneDNN
// (onednn/float_convolution.hpp), its constant weights prepared once and shared between shape
// variants; the others lower each image and group to im2col (a row-wise path for 2-D) + one GEMM.
// Buffers are sized when the kernel is made, so compute allocates nothing.
#include <algorithm>
#include <cstring>

#include <optional>
#include <string>

#include "cpu_kernel.hpp"
#include "onednn/float_convolution.hpp"
#include "onednn/reference_notice.hpp"
#include "ops/conv_layout.hpp"
#include "ops/pointwise_conv.hpp"
#include "ops/unrolled_conv.hpp"
#include "ops/window_columns.hpp"
#include "window_geometry.hpp"

namespace nxrt::cpu {
namespace {

class ConvKernel : public CpuKernel {
 public:
  ConvKernel(const sdk::Host& host, const sdk::Node& node, std::span<const nxrt_shape> inputs,
             const onednn::PostActivation& activation)
      : CpuKernel(false),
        dtype_(inputs[0].dtype),
        group_(node.AttrInt("group", 1)),
        activation_(activation) {
    const Dims x(inputs[0].dims, inputs[0].dims + inputs[0].rank);
    const Dims w(inputs[1].dims, inputs[1].dims + inputs[1].rank);
    const Dims kernel(w.begin() + 2, w.end());
    ConvLayout layout = ResolveConvLayout(node, x, w, "Conv");
    geometry_ = std::move(layout.geometry);
    batch_ = layout.batch;
    channels_ = layout.channels;
    maps_ = layout.maps;
    RequireElements(inputs, 2, maps_, "Conv", "B, one value per output map");
    out_dims_ = std::move(layout.out_dims);
    if (dtype_ != NXRT_DTYPE_FLOAT64 && ElementCount(out_dims_) > 0 && ElementCount(w) > 0) {
      const bool bias = inputs.size() > 2 && inputs[2].dtype != NXRT_DTYPE_UNDEFINED;
      onednn_ = onednn::FloatConvolution::Plan(
          {batch_, channels_, maps_, group_, geometry_, bias, activation_});
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
    activation_.Apply(y, batch_ * maps_ * out_size);
  }

  nxrt_dtype dtype_;
  int64_t group_;
  onednn::PostActivation activation_;  // a FusedConv's
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

// A pointwise float convolution's kernel serves every image size, and one
// along a single axis every length; the others are planned for their shape.
std::unique_ptr<CpuKernel> MakeConv(const sdk::Host& host, const sdk::Node& node,
                                    std::span<const nxrt_shape> inputs) {
  std::string why;
  const std::optional<onednn::PostActivation> activation = onednn::ReadPostActivation(node, &why);
  if (!activation) FailUnsupported(why);
  if (std::unique_ptr<CpuKernel> pointwise = MakePointwiseConv(node, inputs, *activation)) {
    return pointwise;
  }
  if (std::unique_ptr<CpuKernel> unrolled = MakeUnrolledConv(node, inputs, *activation)) {
    return unrolled;
  }
  return std::make_unique<ConvKernel>(host, node, inputs, *activation);
}

// A FusedConv whose activation this EP applies, and without the Z input.
sdk::ClaimResult ClaimFusedConv(const sdk::Node& node, int64_t opset,
                                std::span<const nxrt_value_info> inputs) {
  std::string why;
  if (!onednn::ReadPostActivation(node, &why)) return sdk::ClaimResult::Declined(why);
  if (inputs.size() > 3 && inputs[3].kind != NXRT_VALUE_NONE) {
    return sdk::ClaimResult::Declined(
        "FusedConv: this EP does not add a Z input (a sum) into the convolution; add Z with "
        "an Add node after it, or run the node on another provider");
  }
  return ClaimConv(FloatTypes{})(node, opset, inputs);
}

}  // namespace

void RegisterConvOps(OpRegistry& r) {
  r.Add("Conv",
        {1, ClaimConv(FloatTypes{}),
         [](const sdk::Host& host, const sdk::Node& node, std::span<const nxrt_shape> inputs,
            int64_t) { return MakeConv(host, node, inputs); }});
  // ONNX Runtime's contrib op, which the host also fuses a Conv and its
  // activation into, and nxrt's own with Swish and HardSwish besides
  // (onednn/post_activation.hpp): the activation runs on the convolution's
  // result before it is stored.
  for (const char* domain : {"com.microsoft", "pkg.nxrt"}) {
    r.Add("FusedConv",
          {1, ClaimFusedConv,
           [](const sdk::Host& host, const sdk::Node& node, std::span<const nxrt_shape> inputs,
              int64_t) { return MakeConv(host, node, inputs); }},
          domain);
  }
}

}  // namespace nxrt::cpu
