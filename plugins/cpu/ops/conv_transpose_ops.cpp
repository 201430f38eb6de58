// ConvTranspose for float and double, any number of spatial axes, with
// groups, pads, strides, dilations, output_padding, output_shape and
// auto_pad. A float ConvTranspose whose windows tile the output without
// overlap is one product and a scatter (ops/patch_conv_transpose.hpp); one
// with one to three spatial axes otherwise runs on oneDNN's deconvolution
// (onednn/float_convolution.hpp), its constant weights prepared once and
// shared between shape variants; the others, and
// shapes oneDNN has only a reference kernel for, run one GEMM per image and
// group followed by col2im.
#include <algorithm>
#include <optional>

#include "cpu_kernel.hpp"
#include "onednn/float_convolution.hpp"
#include "ops/patch_conv_transpose.hpp"
#include "ops/window_columns.hpp"
#include "window_geometry.hpp"

namespace nxrt::cpu {
namespace {

class ConvTransposeKernel : public CpuKernel {
 public:
  ConvTransposeKernel(const sdk::Node& node, std::span<const nxrt_shape> inputs)
      : CpuKernel(false), dtype_(inputs[0].dtype), group_(node.AttrInt("group", 1)) {
    const Dims x(inputs[0].dims, inputs[0].dims + inputs[0].rank);
    const Dims w(inputs[1].dims, inputs[1].dims + inputs[1].rank);
    if (x.size() < 3 || w.size() != x.size()) {
      FailInvalid("ConvTranspose: X and W need rank 3 or more");
    }
    const size_t rank = x.size() - 2;
    batch_ = x[0];
    channels_ = x[1];
    if (group_ < 1) FailInvalid("ConvTranspose: group must be positive; fix the group attribute");
    maps_ = w[1] * group_;
    if (w[0] != channels_ || channels_ % group_ != 0) {
      FailInvalid("ConvTranspose: channels do not split into groups");
    }
    RequireElements(inputs, 2, maps_, "ConvTranspose", "B, one value per output map");
    WindowAttributes a = WindowAttributes::Read(node);
    const Dims in(x.begin() + 2, x.end());
    const Dims kernel(w.begin() + 2, w.end());
    CheckWindowAttributes(a, kernel, "ConvTranspose");
    Dims output_padding = node.AttrInts("output_padding");
    if (output_padding.empty()) output_padding.assign(rank, 0);
    const Dims output_shape = node.AttrInts("output_shape");
    if (output_padding.size() != rank || std::any_of(output_padding.begin(), output_padding.end(),
                                                     [](int64_t p) { return p < 0; })) {
      FailInvalid("ConvTranspose: output_padding needs one extent of 0 or more per spatial axis");
    }
    if (!output_shape.empty() && output_shape.size() < rank) {
      FailInvalid("ConvTranspose: output_shape names fewer extents than the spatial axes");
    }
    WindowGeometry& g = geometry_;
    g.kernel = kernel;
    g.strides = a.strides.empty() ? Dims(rank, 1) : a.strides;
    g.dilations = a.dilations.empty() ? Dims(rank, 1) : a.dilations;
    g.pad_begin.assign(rank, 0);
    g.pad_end.assign(rank, 0);
    g.in.assign(rank, 0);
    // The transposed conv's output is the plain conv's input, and vice versa.
    g.out = in;
    for (size_t i = 0; i < rank; ++i) {
      const int64_t extent = (kernel[i] - 1) * g.dilations[i] + 1;
      const int64_t full = g.strides[i] * (in[i] - 1) + output_padding[i] + extent;
      const bool same = a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER";
      if (!output_shape.empty() || same) {
        const int64_t target = !output_shape.empty() ? output_shape[output_shape.size() - rank + i]
                                                     : in[i] * g.strides[i];
        // A negative total (output_shape beyond the full extent) halves with
        // floor division, as ONNX specifies it.
        const int64_t total = full - target;
        const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
        if (a.auto_pad == "SAME_UPPER") {
          g.pad_begin[i] = half;
          g.pad_end[i] = total - half;
        } else {
          g.pad_begin[i] = total - half;
          g.pad_end[i] = half;
        }
      } else if (!a.pads.empty() && a.auto_pad != "VALID") {
        g.pad_begin[i] = a.pads[i];
        g.pad_end[i] = a.pads[i + rank];
      }
      g.in[i] = full - g.pad_begin[i] - g.pad_end[i];
    }
    out_dims_ = {batch_, maps_};
    out_dims_.insert(out_dims_.end(), g.in.begin(), g.in.end());
    const bool any = ElementCount(out_dims_) > 0 && ElementCount(x) > 0 && ElementCount(w) > 0;
    if (dtype_ == NXRT_DTYPE_FLOAT32 && any) {
      patches_ = PatchConvTranspose::Plan({batch_, channels_, maps_, group_, geometry_});
    }
    if (dtype_ == NXRT_DTYPE_FLOAT32 && any && !patches_) {
      const bool bias = inputs.size() > 2 && inputs[2].dtype != NXRT_DTYPE_UNDEFINED;
      onednn_ = onednn::FloatConvolution::PlanTransposed(
          {batch_, channels_, maps_, group_, geometry_, bias});
    }
    if (!onednn_ && !patches_) {
      const int64_t rows = (maps_ / group_) * ElementCount(kernel);
      columns_.resize(rows * ElementCount(in) * (dtype_ == NXRT_DTYPE_FLOAT64 ? 2 : 1));
    }
  }

  void PrepareConstantInputs(std::span<const nxrt_constant_input> constants) override {
    for (const nxrt_constant_input& c : constants) {
      if (c.input_index == 1 && onednn_) {
        weights_ = onednn_->PrepareWeights(static_cast<const float*>(c.bytes));
      }
    }
  }
  std::shared_ptr<sdk::SharedState> ShareableConstantState() override { return weights_; }
  bool AdoptShareableConstantState(const std::shared_ptr<sdk::SharedState>& state) override {
    auto weights = std::dynamic_pointer_cast<onednn::PreparedWeights>(state);
    if (!weights || !onednn_ || !onednn_->Takes(*weights)) return false;
    weights_ = std::move(weights);
    return true;
  }
  // On oneDNN with prepared weights compute allocates nothing.
  bool CaptureSafe() const override { return onednn_ && weights_ != nullptr; }
  void ApplySettings(const EpSettings& settings, std::string_view /*node_name*/) override {
    threads_ = settings.threads;
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, out_dims_);
    if (ElementCount(out_dims_) == 0) return;
    if (patches_) {
      patches_->Run(DataAs<float>(inputs[0].tensor), DataAs<float>(inputs[1].tensor),
                    IsPresent(inputs, 2) ? DataAs<float>(inputs[2].tensor) : nullptr,
                    MutableDataAs<float>(out), threads_);
    } else if (onednn_) {
      onednn_->Run(DataAs<float>(inputs[0].tensor), DataAs<float>(inputs[1].tensor), weights_.get(),
                   IsPresent(inputs, 2) ? DataAs<float>(inputs[2].tensor) : nullptr,
                   MutableDataAs<float>(out));
    } else if (dtype_ == NXRT_DTYPE_FLOAT64) {
      Run<double>(inputs, out);
    } else {
      Run<float>(inputs, out);
    }
  }

 private:
  template <typename T>
  void Run(std::span<const nxrt_value> inputs, nxrt_tensor& out) {
    const T* x = DataAs<T>(inputs[0].tensor);
    const T* w = DataAs<T>(inputs[1].tensor);
    const T* bias = IsPresent(inputs, 2) ? DataAs<T>(inputs[2].tensor) : nullptr;
    T* y = MutableDataAs<T>(out);
    T* columns = reinterpret_cast<T*>(columns_.data());
    const int64_t group_channels = channels_ / group_;
    const int64_t group_maps = maps_ / group_;
    const int64_t x_size = ElementCount(geometry_.out);  // input positions
    const int64_t y_size = ElementCount(geometry_.in);   // output positions
    const int64_t rows = group_maps * ElementCount(geometry_.kernel);
    std::fill(y, y + ElementCount(out_dims_), T(0));
    for (int64_t n = 0; n < batch_; ++n) {
      for (int64_t g = 0; g < group_; ++g) {
        // columns[rows, x_size] = W_g^T [rows, group_channels] * X_g [group_channels, x_size]
        Gemm(true, false, rows, x_size, group_channels, w + g * group_channels * rows,
             x + (n * channels_ + g * group_channels) * x_size, T(0), columns);
        T* image = y + (n * maps_ + g * group_maps) * y_size;
        WalkWindows(geometry_, group_maps, [&](int64_t row, int64_t col, int64_t offset) {
          if (offset >= 0) image[offset] += columns[row * x_size + col];
        });
      }
      if (bias) {
        for (int64_t m = 0; m < maps_; ++m) {
          T* plane = y + (n * maps_ + m) * y_size;
          for (int64_t i = 0; i < y_size; ++i) plane[i] += bias[m];
        }
      }
    }
  }

  nxrt_dtype dtype_;
  int64_t group_;
  WindowGeometry geometry_;  // of the equivalent forward conv: `in` is our output
  int64_t batch_ = 0;
  int64_t channels_ = 0;
  int64_t maps_ = 0;
  Dims out_dims_;
  int threads_ = 1;
  std::optional<PatchConvTranspose> patches_;
  std::optional<onednn::FloatConvolution> onednn_;
  std::shared_ptr<onednn::PreparedWeights> weights_;  // constant W, prepared for onednn_
  std::vector<float> columns_;
};

}  // namespace

void RegisterConvTransposeOps(OpRegistry& r) {
  r.Add("ConvTranspose", {1, ClaimConv(ConvTypes{}),
                          [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
                            return std::make_unique<ConvTransposeKernel>(node, inputs);
                          }});
}

}  // namespace nxrt::cpu
