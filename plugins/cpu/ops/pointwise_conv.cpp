#include "ops/pointwise_conv.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "onednn/float_pointwise_product.hpp"
#include "ops/repeated_shape_plan.hpp"
#include "window_geometry.hpp"

namespace nxrt::cpu {
namespace {

bool AllEqual(const Dims& dims, int64_t value) {
  return std::all_of(dims.begin(), dims.end(), [value](int64_t d) { return d == value; });
}

class PointwiseConvKernel : public CpuKernel {
 public:
  PointwiseConvKernel(onednn::FloatPointwiseProduct product, size_t rank)
      : CpuKernel(true), product_(std::move(product)), out_dims_(rank) {}
  // Reads every extent from the call's tensors; new channel or map counts
  // (weights that are not constant) plan the product again.
  bool ServesOtherShapes() const override { return true; }
  void SetConstantInputs(std::span<const nxrt_bool> flags) override {
    constant_w_ = flags.size() > 1 && flags[1] != 0;
  }
  // Only once the current shape is settled: a call that plans allocates.
  bool CaptureSafe() const override { return direct_.Settled(); }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const nxrt_tensor& w = inputs[1].tensor;
    const bool bias = IsPresent(inputs, 2);
    if (w.rank != x.rank || w.dims[1] != x.dims[1]) {
      FailInvalid("Conv: W " + DimsText(DimsSpan(w)) + " does not fit X " + DimsText(DimsSpan(x)) +
                  "; W needs [maps, channels, 1...] with X's channels");
    }
    const int64_t maps = w.dims[0];
    if (bias && ElementCount(inputs[2].tensor) != maps) {
      FailInvalid("Conv: B holds " + std::to_string(ElementCount(inputs[2].tensor)) +
                  " values for " + std::to_string(maps) + " output maps; give B one per map");
    }
    const onednn::PointwiseShape planned = product_.shape();
    if (maps != planned.maps || x.dims[1] != planned.channels) {
      std::optional<onednn::FloatPointwiseProduct> replanned =
          onednn::FloatPointwiseProduct::Plan({maps, x.dims[1], planned.bias, planned.activation});
      if (!replanned) {
        FailUnsupported("Conv: oneDNN has no 1x1 convolution for W " + DimsText(DimsSpan(w)) +
                        "; run the node on another provider");
      }
      product_ = std::move(*replanned);
    }
    std::copy_n(x.dims, x.rank, out_dims_.begin());
    out_dims_[1] = maps;
    const bool same_shape = DimsEqual(DimsSpan(x), x_dims_) && DimsEqual(DimsSpan(w), w_dims_);
    if (!same_shape) {
      x_dims_.assign(x.dims, x.dims + x.rank);
      w_dims_.assign(w.dims, w.dims + w.rank);
    }
    nxrt_tensor& y = PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_FLOAT32, out_dims_);
    if (ElementCount(out_dims_) == 0) return;
    const int64_t pixels = ElementCount(DimsSpan(x).subspan(2));
    const float* bias_data = bias ? DataAs<float>(inputs[2].tensor) : nullptr;
    direct_.Run(
        same_shape, [&] { return DirectShape(bias); }, constant_w_, DataAs<float>(x),
        DataAs<float>(w), bias_data, MutableDataAs<float>(y),
        [&] {
          for (int64_t n = 0; n < x.dims[0]; ++n) {
            product_.Run(DataAs<float>(x) + n * x.dims[1] * pixels, DataAs<float>(w), bias_data,
                         MutableDataAs<float>(y) + n * maps * pixels, pixels);
          }
        });
  }

 private:
  // The current shape as a convolution of 1x1 windows, for oneDNN's plan.
  onednn::ConvolutionShape DirectShape(bool bias) const {
    const Dims spatial(x_dims_.begin() + 2, x_dims_.end());
    const Dims ones(spatial.size(), 1), zeros(spatial.size(), 0);
    return {x_dims_[0],
            x_dims_[1],
            w_dims_[0],
            1,
            WindowGeometry{spatial, ones, ones, ones, zeros, zeros, spatial},
            bias,
            product_.shape().activation};
  }

  onednn::FloatPointwiseProduct product_;
  bool constant_w_ = false;
  Dims out_dims_;
  Dims x_dims_, w_dims_;  // the last call's
  RepeatedShapePlan direct_;
};

}  // namespace

std::unique_ptr<CpuKernel> MakePointwiseConv(const sdk::Node& node,
                                             std::span<const nxrt_shape> inputs,
                                             const onednn::PostActivation& activation) {
  const nxrt_shape& x = inputs[0];
  const nxrt_shape& w = inputs[1];
  if (x.dtype != NXRT_DTYPE_FLOAT32 || x.rank < 3 || x.rank > 5 || w.rank != x.rank) {
    return nullptr;
  }
  const Dims kernel(w.dims + 2, w.dims + w.rank);
  if (node.AttrInt("group", 1) != 1 || !AllEqual(kernel, 1) || w.dims[1] != x.dims[1] ||
      w.dims[0] < 1 || w.dims[1] < 1) {
    return nullptr;
  }
  const WindowGeometry geometry = ResolveWindow(WindowAttributes::Read(node),
                                                Dims(x.dims + 2, x.dims + x.rank), kernel, "Conv");
  if (!AllEqual(geometry.strides, 1) || !AllEqual(geometry.pad_begin, 0) ||
      !AllEqual(geometry.pad_end, 0)) {
    return nullptr;
  }
  const bool bias = inputs.size() > 2 && inputs[2].dtype != NXRT_DTYPE_UNDEFINED;
  if (bias) RequireElements(inputs, 2, w.dims[0], "Conv", "B, one value per output map");
  std::optional<onednn::FloatPointwiseProduct> product =
      onednn::FloatPointwiseProduct::Plan({w.dims[0], w.dims[1], bias, activation});
  if (!product) return nullptr;
  return std::make_unique<PointwiseConvKernel>(std::move(*product), x.rank);
}

}  // namespace nxrt::cpu
