// CausalConvWithState (opset 27): a depthwise causal 1-D convolution that
// carries its last k - 1 inputs between calls, as the short convolution of
// Mamba and Gated DeltaNet decoders. Per batch and channel the row is the past
// state (zeros when absent) followed by the input; output t is the optional
// SiLU of bias + the kernel's dot product with row[t .. t + k), and the
// present state is the row's last k - 1 values. Arithmetic is in double.
#include <cmath>

#include "cpu_kernel.hpp"

namespace nxrt::cpu {
namespace {

class CausalConvKernel : public CpuKernel {
 public:
  explicit CausalConvKernel(bool silu) : CpuKernel(false), silu_(silu) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const nxrt_tensor& w = inputs[1].tensor;
    if (x.rank != 3 || w.rank != 3 || w.dims[0] != x.dims[1] || w.dims[1] != 1 || w.dims[2] < 1) {
      FailInvalid("CausalConvWithState: input " + DimsText(DimsSpan(x)) + " and weight " +
                  DimsText(DimsSpan(w)) +
                  " are not (batch, channels, length) and (channels, 1, k)");
    }
    const int64_t batch = x.dims[0], channels = x.dims[1], length = x.dims[2], k = w.dims[2];
    const Dims state_dims{batch, channels, k - 1};
    if (IsPresent(inputs, 2) && ElementCount(inputs[2].tensor) != channels) {
      FailInvalid("CausalConvWithState: bias holds " +
                  std::to_string(ElementCount(inputs[2].tensor)) + " values for " +
                  std::to_string(channels) + " channels; give one per channel");
    }
    const bool has_past = IsPresent(inputs, 3);
    if (has_past && !DimsEqual(DimsSpan(inputs[3].tensor), state_dims)) {
      FailInvalid("CausalConvWithState: past_state is " + DimsText(DimsSpan(inputs[3].tensor)) +
                  ", expected " + DimsText(state_dims));
    }
    nxrt_tensor& y = PrepareOutput(ctx, outputs, 0, x.dtype, DimsSpan(x));
    nxrt_tensor* present = nullptr;
    if (outputs.size() > 1 && outputs[1].kind == NXRT_VALUE_TENSOR) {
      present = &PrepareOutput(ctx, outputs, 1, x.dtype, state_dims);
    }
    Dispatch(FloatTypes{}, x.dtype, "CausalConvWithState", [&](auto tag) {
      using T = typename decltype(tag)::type;
      auto at = [](const nxrt_tensor& t, int64_t i) {
        return static_cast<double>(static_cast<ComputeType<T>>(DataAs<T>(t)[i]));
      };
      std::vector<double> row(k - 1 + length);
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t c = 0; c < channels; ++c) {
          const int64_t state_base = (b * channels + c) * (k - 1);
          const int64_t base = (b * channels + c) * length;
          for (int64_t i = 0; i < k - 1; ++i)
            row[i] = has_past ? at(inputs[3].tensor, state_base + i) : 0.0;
          for (int64_t t = 0; t < length; ++t) row[k - 1 + t] = at(x, base + t);
          const double bias = IsPresent(inputs, 2) ? at(inputs[2].tensor, c) : 0.0;
          for (int64_t t = 0; t < length; ++t) {
            double v = bias;
            for (int64_t j = 0; j < k; ++j) v += at(w, c * k + j) * row[t + j];
            if (silu_) v = v / (1.0 + std::exp(-v));
            MutableDataAs<T>(y)[base + t] = static_cast<T>(static_cast<ComputeType<T>>(v));
          }
          if (!present) continue;
          for (int64_t i = 0; i < k - 1; ++i) {
            MutableDataAs<T>(*present)[state_base + i] =
                static_cast<T>(static_cast<ComputeType<T>>(row[length + i]));
          }
        }
      }
    });
  }

 private:
  bool silu_;
};

}  // namespace

void RegisterCausalConvOps(OpRegistry& r) {
  r.Add(
      "CausalConvWithState",
      {27,
       [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
         const std::string activation = node.AttrString("activation", "none");
         if (activation != "none" && activation != "silu" && activation != "swish") {
           return sdk::ClaimResult::Declined("CausalConvWithState: activation=" + activation +
                                             " not implemented");
         }
         return ClaimUnless(CheckInputDtype(node, inputs, 0, FloatTypes{}));
       },
       [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
         return std::make_unique<CausalConvKernel>(node.AttrString("activation", "none") != "none");
       }});
}

}  // namespace nxrt::cpu
