// Conv (1-D and 2-D, NCHW, float32 and float16) through cuDNN's legacy
// convolution API: descriptors, the algorithm and its workspace are chosen
// once per shape when the kernel is made, so compute only enqueues the
// convolution, cudnnAddTensor for the bias, and for pads cuDNN cannot express
// (one side padded more than the other) a padding copy of X into a buffer
// the kernel owns. A 1-D conv is a 2-D one over a height of 1.
#include <array>
#include <string>

#include "dtype.hpp"
#include "kernels/cuda_kernel.hpp"
#include "kernels/cudnn_handles.hpp"
#include "kernels/kernel_factory.hpp"
#include "kernels/spatial_launch.hpp"
#include "window_geometry.hpp"

namespace nxrt::cuda {
namespace {

// The most workspace one convolution may hold; algorithms wanting more are
// passed over for the next best.
constexpr size_t kMaxWorkspaceBytes = size_t{256} << 20;

[[noreturn]] void Refuse(const sdk::Node& node, nxrt_status_code code, const std::string& why) {
  throw sdk::Error(code, "node '" + std::string(node.name()) + "' (" + std::string(node.op_type()) +
                             "): " + why);
}

class ConvKernel : public CudaKernel {
 public:
  ConvKernel(const DeviceContext& context, const sdk::Node& node,
             std::span<const nxrt_shape> inputs)
      : CudaKernel(context), dtype_(inputs[0].dtype) {
    const std::vector<int64_t> x = DimsOf(inputs[0]);
    const std::vector<int64_t> w = DimsOf(inputs[1]);
    if ((x.size() != 3 && x.size() != 4) || w.size() != x.size()) {
      Refuse(node, NXRT_STATUS_UNSUPPORTED,
             "CUDA convolves 1-D and 2-D NCHW inputs with weights of the same rank");
    }
    const int64_t group = node.AttrInt("group", 1);
    const int64_t batch = x[0], channels = x[1], maps = w[0];
    if (group < 1 || channels % group != 0 || maps % group != 0 || w[1] * group != channels) {
      Refuse(node, NXRT_STATUS_INVALID_ARGUMENT, "channels do not split into groups");
    }
    const std::vector<int64_t> in(x.begin() + 2, x.end());
    const std::vector<int64_t> kernel(w.begin() + 2, w.end());
    const WindowAttributes attributes = WindowAttributes::Read(node);
    if (!attributes.kernel_shape.empty() && attributes.kernel_shape != kernel) {
      Refuse(node, NXRT_STATUS_INVALID_ARGUMENT, "kernel_shape differs from the weights' shape");
    }
    std::vector<WindowAxis> axes = ResolveWindow(attributes, in, kernel, "Conv");
    out_dims_ = {batch, maps};
    for (const WindowAxis& axis : axes) out_dims_.push_back(axis.out);
    if (axes.size() == 1) axes.insert(axes.begin(), WindowAxis{});  // height 1
    has_bias_ = inputs.size() > 2 && inputs[2].dtype != NXRT_DTYPE_UNDEFINED;
    if (has_bias_ && ElementCount(DimsOf(inputs[2])) != maps) {
      Refuse(node, NXRT_STATUS_INVALID_ARGUMENT, "the bias does not hold one value per map");
    }
    empty_ = ElementCount(out_dims_) == 0;
    if (empty_) return;
    if (ElementCount(x) == 0) Refuse(node, NXRT_STATUS_UNSUPPORTED, "an empty input");

    const WindowAxis& h = axes[0];
    const WindowAxis& wd = axes[1];
    padded_ = !h.CudnnExpresses() || !wd.CudnnExpresses();
    if (padded_) {
      pad_ = PaddingOf(batch * channels, h, wd);
      pad_buffer_ = std::make_unique<DeviceBuffer>(pad_.planes * pad_.out_h * pad_.out_w *
                                                   ElementSize(dtype_));
    }
    const cudnnDataType_t type = CudnnType(dtype_);
    SetTensor4d(x_, type, batch, channels, padded_ ? pad_.out_h : h.in,
                padded_ ? pad_.out_w : wd.in);
    SetTensor4d(y_, type, batch, maps, h.out, wd.out);
    CheckCudnn(cudnnSetFilter4dDescriptor(w_.get(), type, CUDNN_TENSOR_NCHW, CudnnInt(maps, "maps"),
                                          CudnnInt(w[1], "channels per group"),
                                          CudnnInt(h.kernel, "kernel height"),
                                          CudnnInt(wd.kernel, "kernel width")),
               "cudnnSetFilter4dDescriptor");
    // Float accumulation for float16 too: the CPU EP widens to float.
    CheckCudnn(cudnnSetConvolution2dDescriptor(
                   convolution_.get(), padded_ ? 0 : CudnnInt(h.pad_begin, "pad"),
                   padded_ ? 0 : CudnnInt(wd.pad_begin, "pad"), CudnnInt(h.stride, "stride"),
                   CudnnInt(wd.stride, "stride"), CudnnInt(h.dilation, "dilation"),
                   CudnnInt(wd.dilation, "dilation"), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
               "cudnnSetConvolution2dDescriptor");
    CheckCudnn(cudnnSetConvolutionGroupCount(convolution_.get(), CudnnInt(group, "group")),
               "cudnnSetConvolutionGroupCount");
    // float16 may use tensor cores. float32 is kept to FMA kernels: the
    // default math allows TF32 tensor cores, whose 10-bit mantissa can miss
    // float32 results by more than 1e-3 relative where sums cancel.
    CheckCudnn(cudnnSetConvolutionMathType(convolution_.get(), dtype_ == NXRT_DTYPE_FLOAT16
                                                                   ? CUDNN_TENSOR_OP_MATH
                                                                   : CUDNN_FMA_MATH),
               "cudnnSetConvolutionMathType");
    CheckOutputShape(node);
    ChooseAlgorithm(node);
    if (has_bias_) SetTensor4d(bias_, type, 1, maps, 1, 1);
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = Output(ctx, outputs, 0, dtype_, out_dims_);
    if (empty_) return;
    const void* x = inputs[0].tensor.data;
    if (padded_) {
      LaunchPadPlanes(dtype_, x, pad_buffer_->get(), pad_, 0.0f, stream());
      x = pad_buffer_->get();
    }
    const float one = 1.0f, zero = 0.0f;
    CheckCudnn(
        cudnnConvolutionForward(context().dnn, &one, x_.get(), x, w_.get(), inputs[1].tensor.data,
                                convolution_.get(), algorithm_, workspace_->get(), workspace_bytes_,
                                &zero, y_.get(), out.data),
        "cudnnConvolutionForward");
    if (has_bias_) {
      CheckCudnn(cudnnAddTensor(context().dnn, &one, bias_.get(), inputs[2].tensor.data, &one,
                                y_.get(), out.data),
                 "cudnnAddTensor(bias)");
    }
  }
  bool CaptureSafe() const override { return true; }

 private:
  // cuDNN must agree with the ONNX output extents the windows were resolved to.
  void CheckOutputShape(const sdk::Node& node) const {
    std::array<int, 4> dims{};
    CheckCudnn(cudnnGetConvolutionNdForwardOutputDim(convolution_.get(), x_.get(), w_.get(), 4,
                                                     dims.data()),
               "cudnnGetConvolutionNdForwardOutputDim");
    const int64_t h = out_dims_.size() == 4 ? out_dims_[2] : 1;
    if (dims[2] != h || dims[3] != out_dims_.back()) {
      Refuse(node, NXRT_STATUS_INTERNAL,
             "cuDNN's output extents " + std::to_string(dims[2]) + "x" + std::to_string(dims[3]) +
                 " differ from the resolved window's");
    }
  }

  // The fastest algorithm by cuDNN's heuristics that runs at this math type
  // within the workspace limit. Heuristics only: timing candidates would run
  // and allocate on the device while the kernel is made.
  void ChooseAlgorithm(const sdk::Node& node) {
    int capacity = 0;
    CheckCudnn(cudnnGetConvolutionForwardAlgorithmMaxCount(context().dnn, &capacity),
               "cudnnGetConvolutionForwardAlgorithmMaxCount");
    std::vector<cudnnConvolutionFwdAlgoPerf_t> candidates(static_cast<size_t>(capacity));
    int found = 0;
    CheckCudnn(cudnnGetConvolutionForwardAlgorithm_v7(context().dnn, x_.get(), w_.get(),
                                                      convolution_.get(), y_.get(), capacity,
                                                      &found, candidates.data()),
               "cudnnGetConvolutionForwardAlgorithm_v7");
    for (int i = 0; i < found; ++i) {
      const cudnnConvolutionFwdAlgoPerf_t& candidate = candidates[i];
      if (candidate.status != CUDNN_STATUS_SUCCESS) continue;
      size_t bytes = 0;
      if (cudnnGetConvolutionForwardWorkspaceSize(context().dnn, x_.get(), w_.get(),
                                                  convolution_.get(), y_.get(), candidate.algo,
                                                  &bytes) != CUDNN_STATUS_SUCCESS ||
          bytes > kMaxWorkspaceBytes) {
        continue;
      }
      algorithm_ = candidate.algo;
      workspace_bytes_ = bytes;
      workspace_ = std::make_unique<DeviceBuffer>(bytes);
      return;
    }
    Refuse(node, NXRT_STATUS_UNSUPPORTED,
           "cuDNN has no convolution algorithm for these shapes within " +
               std::to_string(kMaxWorkspaceBytes >> 20) + " MiB of workspace");
  }

  nxrt_dtype dtype_;
  std::vector<int64_t> out_dims_;
  bool has_bias_ = false;
  bool empty_ = false;
  bool padded_ = false;
  PadGeometry pad_;
  std::unique_ptr<DeviceBuffer> pad_buffer_;
  TensorDescriptor x_;
  TensorDescriptor y_;
  TensorDescriptor bias_;
  FilterDescriptor w_;
  ConvolutionDescriptor convolution_;
  cudnnConvolutionFwdAlgo_t algorithm_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspace_bytes_ = 0;
  std::unique_ptr<DeviceBuffer> workspace_;
};

}  // namespace

std::unique_ptr<sdk::Kernel> MakeConvKernel(const DeviceContext& context, const sdk::Node& node,
                                            std::span<const nxrt_shape> inputs, int64_t) {
  if (node.op_type() != "Conv") return nullptr;
  return std::make_unique<ConvKernel>(context, node, inputs);
}

}  // namespace nxrt::cuda
