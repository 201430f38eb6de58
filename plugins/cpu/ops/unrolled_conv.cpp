#include "ops/unrolled_conv.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "onednn/float_pointwise_product.hpp"
#include "onednn/thread_workspace.hpp"
#include "ops/repeated_shape_plan.hpp"
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

class UnrolledConvKernel : public CpuKernel {
 public:
  UnrolledConvKernel(WindowAttributes attributes, onednn::FloatPointwiseProduct product)
      : CpuKernel(true), attributes_(std::move(attributes)), product_(std::move(product)) {}
  // Every extent is read from the call's tensors; a new length resolves the
  // window again and rebinds the product's pixel count.
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
    const bool same_shape = DimsEqual(DimsSpan(x), x_dims_) && DimsEqual(DimsSpan(w), w_dims_);
    if (!same_shape) Resolve(x, w);
    const int64_t maps = w_dims_[0];
    const bool bias = IsPresent(inputs, 2);
    if (bias && ElementCount(inputs[2].tensor) != maps) {
      FailInvalid("Conv: B holds " + std::to_string(ElementCount(inputs[2].tensor)) +
                  " values for " + std::to_string(maps) + " output maps; give B one per map");
    }
    nxrt_tensor& y = PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_FLOAT32, out_dims_);
    if (ElementCount(out_dims_) == 0) return;
    const float* bias_data = bias ? DataAs<float>(inputs[2].tensor) : nullptr;
    const auto shape = [&] {
      return onednn::ConvolutionShape{
          x_dims_[0], x_dims_[1], maps, 1, window_, bias, product_.shape().activation};
    };
    direct_.Run(same_shape, shape, constant_w_, DataAs<float>(x), DataAs<float>(w), bias_data,
                MutableDataAs<float>(y), [&] { RunProduct(x, w, bias_data, y); });
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

  // Resolves the window at X's and W's dims, and plans the product again
  // when W (not constant) brings new map or row counts.
  void Resolve(const nxrt_tensor& x, const nxrt_tensor& w) {
    if (w.rank != x.rank || w.dims[1] != x.dims[1]) {
      FailInvalid("Conv: W " + DimsText(DimsSpan(w)) + " does not fit X " + DimsText(DimsSpan(x)) +
                  "; W needs [maps, channels, kernel...] with X's channels");
    }
    const Dims kernel(w.dims + 2, w.dims + w.rank);
    WindowGeometry geometry =
        ResolveWindow(attributes_, Dims(x.dims + 2, x.dims + x.rank), kernel, "Conv");
    const int64_t rows = w.dims[1] * ElementCount(kernel);
    const onednn::PointwiseShape& planned = product_.shape();
    if (w.dims[0] != planned.maps || rows != planned.channels) {
      std::optional<onednn::FloatPointwiseProduct> replanned =
          onednn::FloatPointwiseProduct::Plan({w.dims[0], rows, planned.bias, planned.activation});
      if (!replanned) {
        FailUnsupported("Conv: oneDNN has no product for W " + DimsText(DimsSpan(w)) +
                        "; run the node on another provider");
      }
      product_ = std::move(*replanned);
    }
    x_dims_.assign(x.dims, x.dims + x.rank);
    w_dims_.assign(w.dims, w.dims + w.rank);
    out_dims_ = {x.dims[0], w.dims[0]};
    out_dims_.insert(out_dims_.end(), geometry.out.begin(), geometry.out.end());
    window_ = geometry;
    geometry_ = AsTwoAxes(std::move(geometry));
  }

  WindowAttributes attributes_;
  onednn::FloatPointwiseProduct product_;
  bool constant_w_ = false;
  // What the last call's dims resolved to.
  Dims x_dims_, w_dims_, out_dims_;
  WindowGeometry window_;    // as the node has it
  WindowGeometry geometry_;  // with two spatial axes
  RepeatedShapePlan direct_;
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
