#include "ops/pointwise_conv.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "onednn/float_pointwise_product.hpp"
#include "ops/shape_general_conv.hpp"
#include "window_geometry.hpp"

namespace nxrt::cpu {
namespace {

bool AllEqual(const Dims& dims, int64_t value) {
  return std::all_of(dims.begin(), dims.end(), [value](int64_t d) { return d == value; });
}

class PointwiseConvKernel : public ShapeGeneralConvKernel {
 public:
  PointwiseConvKernel(onednn::FloatPointwiseProduct product, size_t rank)
      : ShapeGeneralConvKernel(std::move(product)), out_dims_(rank) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const nxrt_tensor& w = inputs[1].tensor;
    const bool same_shape = NoteShape(x, w);
    const int64_t maps = w_dims_[0];
    const float* bias = BiasOf(inputs, maps);
    if (!same_shape) {
      std::copy_n(x.dims, x.rank, out_dims_.begin());
      out_dims_[1] = maps;
    }
    nxrt_tensor& y = PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_FLOAT32, out_dims_);
    if (ElementCount(out_dims_) == 0) return;
    const int64_t pixels = ElementCount(DimsSpan(x).subspan(2));
    RunFastest(
        same_shape, [&] { return DirectShape(bias != nullptr); }, x, w, bias, y,
        [&] {
          for (int64_t n = 0; n < x.dims[0]; ++n) {
            product_.Run(DataAs<float>(x) + n * x.dims[1] * pixels, DataAs<float>(w), bias,
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

  Dims out_dims_;
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
