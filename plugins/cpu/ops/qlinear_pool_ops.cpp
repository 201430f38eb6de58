// ONNX Runtime's com.microsoft QLinearGlobalAveragePool: the mean of each
// channel of an 8-bit image, requantised, as ONNX Runtime computes it: the
// channel's sum less x_zero per element in int32, times
// x_scale / (y_scale * size) in float32, rounded half to even, plus y_zero,
// saturated. NCHW, or channels last with `channels_last`; scales and zero
// points per tensor.
#include <algorithm>
#include <string>
#include <vector>

#include "attention/kernel_support.hpp"
#include "cpu_kernel.hpp"
#include "quantized/saturating_round.hpp"

namespace nxrt::cpu {
namespace {

using Int8Types = TypeList<uint8_t, int8_t>;

enum Input : size_t { kX, kXScale, kXZero, kYScale, kYZero };

class QLinearGlobalAveragePoolKernel : public CpuKernel {
 public:
  QLinearGlobalAveragePoolKernel(const sdk::Node& node, std::span<const nxrt_shape> shapes)
      : CpuKernel(false),
        name_(NodeText(node)),
        channels_last_(node.AttrInt("channels_last", 0) != 0),
        dims_(shapes[kX].dims, shapes[kX].dims + shapes[kX].rank) {
    if (dims_.size() < 3)
      FailInvalid(name_ + ": X needs rank 3 or more; give it a batch, channels and an image");
    for (size_t i : {kXScale, kXZero, kYScale, kYZero}) {
      RequireElements(shapes, i, 1, name_, "a scale or zero point per tensor");
    }
    channels_ = dims_[channels_last_ ? dims_.size() - 1 : 1];
    size_ = ElementCount(dims_) / std::max<int64_t>(dims_[0] * channels_, 1);
    out_dims_.assign(dims_.size(), 1);
    out_dims_[0] = dims_[0];
    out_dims_[channels_last_ ? dims_.size() - 1 : 1] = channels_;
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_dtype dtype = inputs[kX].tensor.dtype;
    nxrt_tensor& y = PrepareOutput(ctx, outputs, 0, dtype, out_dims_);
    Dispatch(Int8Types{}, dtype, "QLinearGlobalAveragePool", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto zero = [&](size_t i) {
        return IsPresent(inputs, i) ? static_cast<int32_t>(*DataAs<T>(inputs[i].tensor)) : 0;
      };
      const float scale = *DataAs<float>(inputs[kXScale].tensor) /
                          (*DataAs<float>(inputs[kYScale].tensor) * static_cast<float>(size_));
      const int32_t x_zero = zero(kXZero);
      const float y_zero = static_cast<float>(zero(kYZero));
      const T* x = DataAs<T>(inputs[kX].tensor);
      T* out = MutableDataAs<T>(y);
      sums_.assign(channels_, 0);
      for (int64_t n = 0; n < dims_[0]; ++n) {
        const T* image = x + n * channels_ * size_;
        std::fill(sums_.begin(), sums_.end(), 0);
        for (int64_t c = 0; c < channels_; ++c) {
          for (int64_t i = 0; i < size_; ++i) {
            sums_[c] += channels_last_ ? image[i * channels_ + c] : image[c * size_ + i];
          }
        }
        for (int64_t c = 0; c < channels_; ++c) {
          const int32_t acc = sums_[c] - x_zero * static_cast<int32_t>(size_);
          out[n * channels_ + c] = SaturatingRound<T>(static_cast<float>(acc) * scale, y_zero);
        }
      }
    });
  }

 private:
  std::string name_;
  bool channels_last_;
  Dims dims_, out_dims_;
  int64_t channels_ = 0, size_ = 0;
  std::vector<int32_t> sums_;
};

}  // namespace

void RegisterQLinearPoolOps(OpRegistry& r) {
  r.Add("QLinearGlobalAveragePool",
        {1, ClaimInputDtype(Int8Types{}),
         [](const sdk::Node& node, std::span<const nxrt_shape> shapes, int64_t) {
           return std::make_unique<QLinearGlobalAveragePoolKernel>(node, shapes);
         }},
        "com.microsoft");
}

}  // namespace nxrt::cpu
