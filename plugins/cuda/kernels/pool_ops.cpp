// MaxPool and AveragePool (1-D and 2-D) and GlobalMaxPool and
// GlobalAveragePool (any spatial rank) over NCHW float32 and float16, through
// cudnnPoolingForward. The window is resolved once per shape when the kernel
// is made. A window cuDNN cannot pad itself (one side padded more than the
// other, or ceil_mode) runs on a copy of X padded with -inf for max, or with
// zeros for an average whose count includes the pads. A global pool is one
// window over the plane viewed as [rows, last axis]; a 1-D pool is a 2-D one
// over a height of 1.
#include <cmath>
#include <string>

#include "dtype.hpp"
#include "kernels/cuda_kernel.hpp"
#include "kernels/cudnn_handles.hpp"
#include "kernels/kernel_factory.hpp"
#include "kernels/spatial_launch.hpp"
#include "window_geometry.hpp"

namespace nxrt::cuda {
namespace {

[[noreturn]] void Refuse(const sdk::Node& node, nxrt_status_code code, const std::string& why) {
  throw sdk::Error(code, "node '" + std::string(node.name()) + "' (" + std::string(node.op_type()) +
                             "): " + why);
}

class PoolKernel : public CudaKernel {
 public:
  PoolKernel(const DeviceContext& context, const sdk::Node& node, const nxrt_shape& input, bool max,
             bool global)
      : CudaKernel(context), dtype_(input.dtype) {
    const std::vector<int64_t> x = DimsOf(input);
    if (x.size() < 3 || (!global && x.size() > 4)) {
      Refuse(node, NXRT_STATUS_UNSUPPORTED,
             global ? "a global pool needs N, C and a spatial axis"
                    : "CUDA pools 1-D and 2-D NCHW inputs");
    }
    const std::vector<int64_t> in(x.begin() + 2, x.end());
    std::vector<WindowAxis> axes;
    out_dims_ = {x[0], x[1]};
    if (global) {
      WindowAxis rows, columns;
      rows.in = rows.kernel = ElementCount(std::span(in).first(in.size() - 1));
      columns.in = columns.kernel = in.back();
      axes = {rows, columns};
      out_dims_.resize(x.size(), 1);
    } else {
      const WindowAttributes attributes = WindowAttributes::Read(node);
      if (attributes.kernel_shape.size() != in.size()) {
        Refuse(node, NXRT_STATUS_INVALID_ARGUMENT, "kernel_shape must give each spatial axis");
      }
      for (int64_t dilation : attributes.dilations) {
        if (dilation != 1) Refuse(node, NXRT_STATUS_UNSUPPORTED, "cuDNN pools without dilation");
      }
      axes = ResolveWindow(attributes, in, attributes.kernel_shape, std::string(node.op_type()));
      for (const WindowAxis& axis : axes) out_dims_.push_back(axis.out);
      if (axes.size() == 1) axes.insert(axes.begin(), WindowAxis{});  // height 1
    }
    empty_ = ElementCount(out_dims_) == 0;
    if (empty_) return;
    if (ElementCount(x) == 0) Refuse(node, NXRT_STATUS_UNSUPPORTED, "an empty input plane");

    const bool include_pad = node.AttrInt("count_include_pad", 0) != 0;
    const WindowAxis& h = axes[0];
    const WindowAxis& w = axes[1];
    if (!max) {
      if (auto problem = AverageWindowProblem(axes, include_pad)) {
        Refuse(node, NXRT_STATUS_UNSUPPORTED, *problem);
      }
    }
    padded_ = !h.CudnnExpresses() || !w.CudnnExpresses();
    if (padded_) {
      pad_ = PaddingOf(x[0] * x[1], h, w);
      pad_buffer_ = std::make_unique<DeviceBuffer>(pad_.planes * pad_.out_h * pad_.out_w *
                                                   ElementSize(dtype_));
      fill_ = max ? -INFINITY : 0.0f;
    }
    const cudnnDataType_t type = CudnnType(dtype_);
    SetTensor4d(x_, type, x[0], x[1], padded_ ? pad_.out_h : h.in, padded_ ? pad_.out_w : w.in);
    SetTensor4d(y_, type, x[0], x[1], h.out, w.out);
    const cudnnPoolingMode_t mode = max           ? CUDNN_POOLING_MAX
                                    : include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                  : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    // NaN loses to any number in a max, as on the CPU EP.
    CheckCudnn(cudnnSetPooling2dDescriptor(
                   pooling_.get(), mode, CUDNN_NOT_PROPAGATE_NAN, CudnnInt(h.kernel, "window"),
                   CudnnInt(w.kernel, "window"), padded_ ? 0 : CudnnInt(h.pad_begin, "pad"),
                   padded_ ? 0 : CudnnInt(w.pad_begin, "pad"), CudnnInt(h.stride, "stride"),
                   CudnnInt(w.stride, "stride")),
               "cudnnSetPooling2dDescriptor");
    int n = 0, c = 0, out_h = 0, out_w = 0;
    CheckCudnn(cudnnGetPooling2dForwardOutputDim(pooling_.get(), x_.get(), &n, &c, &out_h, &out_w),
               "cudnnGetPooling2dForwardOutputDim");
    if (out_h != h.out || out_w != w.out) {
      Refuse(node, NXRT_STATUS_INTERNAL,
             "cuDNN's output extents " + std::to_string(out_h) + "x" + std::to_string(out_w) +
                 " differ from the resolved window's");
    }
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = Output(ctx, outputs, 0, dtype_, out_dims_);
    if (empty_) return;
    const void* x = inputs[0].tensor.data;
    if (padded_) {
      LaunchPadPlanes(dtype_, x, pad_buffer_->get(), pad_, fill_, stream());
      x = pad_buffer_->get();
    }
    const float one = 1.0f, zero = 0.0f;
    CheckCudnn(cudnnPoolingForward(context().dnn, pooling_.get(), &one, x_.get(), x, &zero,
                                   y_.get(), out.data),
               "cudnnPoolingForward");
  }
  bool CaptureSafe() const override { return true; }

 private:
  nxrt_dtype dtype_;
  std::vector<int64_t> out_dims_;
  bool empty_ = false;
  bool padded_ = false;
  PadGeometry pad_;
  float fill_ = 0.0f;
  std::unique_ptr<DeviceBuffer> pad_buffer_;
  TensorDescriptor x_;
  TensorDescriptor y_;
  PoolingDescriptor pooling_;
};

}  // namespace

std::unique_ptr<sdk::Kernel> MakePoolKernel(const DeviceContext& context, const sdk::Node& node,
                                            std::span<const nxrt_shape> inputs, int64_t) {
  const std::string_view op = node.op_type();
  const bool max = op == "MaxPool" || op == "GlobalMaxPool";
  const bool global = op == "GlobalMaxPool" || op == "GlobalAveragePool";
  if (!max && !global && op != "AveragePool") return nullptr;
  return std::make_unique<PoolKernel>(context, node, inputs[0], max, global);
}

}  // namespace nxrt::cuda
