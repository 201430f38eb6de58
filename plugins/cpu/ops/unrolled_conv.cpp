#include "ops/unrolled_conv.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "onednn/float_pointwise_product.hpp"
#include "onednn/thread_workspace.hpp"
#include "ops/shape_general_conv.hpp"
#include "ops/window_columns.hpp"
#include "window_geometry.hpp"

namespace nxrt::cpu {
namespace {

// `g` with one spatial axis made two, a unit row before it, so that one
// im2col serves both ranks.
WindowGeometry AsTwoAxes(WindowGeometry g) {
  if (g.in.size() == 2) return g;
  for (Dims* ones : {&g.in, &g.kernel, &g.strides, &g.dilations, &g.out}) {
    ones->insert(ones->begin(), 1);
  }
  for (Dims* zeros : {&g.pad_begin, &g.pad_end}) zeros->insert(zeros->begin(), 0);
  return g;
}

// Whether the window moves along one axis only: one spatial axis, or two of
// which one the image, the kernel and the output all span at extent 1.
bool AlongOneAxis(const WindowGeometry& g) {
  if (g.in.size() == 1) return true;
  if (g.in.size() != 2) return false;
  for (size_t a = 0; a < 2; ++a) {
    if (g.in[a] == 1 && g.out[a] == 1 && g.kernel[a] == 1 && g.pad_begin[a] == 0 &&
        g.pad_end[a] == 0) {
      return true;
    }
  }
  return false;
}

class UnrolledConvKernel : public ShapeGeneralConvKernel {
 public:
  UnrolledConvKernel(WindowAttributes attributes, onednn::FloatPointwiseProduct product)
      : ShapeGeneralConvKernel(std::move(product)), attributes_(std::move(attributes)) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const nxrt_tensor& w = inputs[1].tensor;
    const bool same_shape = NoteShape(x, w);
    if (!same_shape) {
      try {
        PlanWindow(x, w);
      } catch (...) {
        x_dims_.clear();  // a shape whose window fails is met anew next call
        throw;
      }
    }
    const float* bias = BiasOf(inputs, w_dims_[0]);
    nxrt_tensor& y = PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_FLOAT32, out_dims_);
    if (ElementCount(out_dims_) == 0) return;
    const auto shape = [&] {
      return onednn::ConvolutionShape{x_dims_[0],
                                      x_dims_[1],
                                      w_dims_[0],
                                      1,
                                      window_,
                                      bias != nullptr,
                                      product_.shape().activation};
    };
    RunFastest(same_shape, shape, x, w, bias, y, [&] { RunProduct(x, w, bias, y); });
  }

 private:
  // Each image's window unrolled into the thread's workspace, times W.
  void RunProduct(const nxrt_tensor& x, const nxrt_tensor& w, const float* bias, nxrt_tensor& y) {
    const int64_t channels = x_dims_[1];
    const int64_t maps = w_dims_[0];
    const int64_t rows = channels * ElementCount(geometry_.kernel);
    const int64_t pixels = ElementCount(geometry_.out);
    const int64_t image = channels * ElementCount(geometry_.in);
    auto* columns = static_cast<float*>(onednn::ThreadWorkspace(
        onednn::Workspace::kActivations, static_cast<size_t>(rows * pixels) * sizeof(float)));
    for (int64_t n = 0; n < x_dims_[0]; ++n) {
      Im2Col2d(geometry_, channels, DataAs<float>(x) + n * image, columns);
      product_.Run(columns, DataAs<float>(w), bias, MutableDataAs<float>(y) + n * maps * pixels,
                   pixels);
    }
  }

  // The window and the output dims at X's and W's dims.
  void PlanWindow(const nxrt_tensor& x, const nxrt_tensor& w) {
    WindowGeometry geometry = ResolveWindow(attributes_, Dims(x.dims + 2, x.dims + x.rank),
                                            Dims(w.dims + 2, w.dims + w.rank), "Conv");
    out_dims_ = {x.dims[0], w.dims[0]};
    out_dims_.insert(out_dims_.end(), geometry.out.begin(), geometry.out.end());
    window_ = geometry;
    geometry_ = AsTwoAxes(std::move(geometry));
  }

  WindowAttributes attributes_;
  Dims out_dims_;            // at x_dims_ and w_dims_
  WindowGeometry window_;    // as the node has it
  WindowGeometry geometry_;  // with two spatial axes
};

}  // namespace

std::unique_ptr<CpuKernel> MakeUnrolledConv(const sdk::Node& node,
                                            std::span<const nxrt_shape> inputs,
                                            const onednn::PostActivation& activation) {
  const nxrt_shape& x = inputs[0];
  const nxrt_shape& w = inputs[1];
  if (x.dtype != NXRT_DTYPE_FLOAT32 || x.rank < 3 || x.rank > 4 || w.rank != x.rank ||
      node.AttrInt("group", 1) != 1 || w.dims[1] != x.dims[1] || w.dims[0] < 1 || w.dims[1] < 1) {
    return nullptr;
  }
  const Dims kernel(w.dims + 2, w.dims + w.rank);
  if (ElementCount(kernel) < 2) return nullptr;
  WindowAttributes attributes = WindowAttributes::Read(node);
  const WindowGeometry geometry =
      ResolveWindow(attributes, Dims(x.dims + 2, x.dims + x.rank), kernel, "Conv");
  if (!AlongOneAxis(geometry) || ElementCount(geometry.out) == 0) return nullptr;
  const bool bias = inputs.size() > 2 && inputs[2].dtype != NXRT_DTYPE_UNDEFINED;
  if (bias) RequireElements(inputs, 2, w.dims[0], "Conv", "B, one value per output map");
  std::optional<onednn::FloatPointwiseProduct> product = onednn::FloatPointwiseProduct::Plan(
      {w.dims[0], w.dims[1] * ElementCount(kernel), bias, activation});
  if (!product) return nullptr;
  return std::make_unique<UnrolledConvKernel>(std::move(attributes), std::move(*product));
}

}  // namespace nxrt::cpu
