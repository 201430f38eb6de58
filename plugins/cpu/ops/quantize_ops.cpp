// Linear quantisation: QuantizeLinear and DequantizeLinear (per tensor, or
// per axis with 1-D scales) to and from int8/uint8/int32, and
// DynamicQuantizeLinear, which picks a uint8 scale and zero point from the
// data's range. Rounding is to nearest even, then saturation.
#include <algorithm>
#include <cmath>
#include <limits>

#include "cpu_kernel.hpp"

namespace nxrt::cpu {
namespace {

using QuantizedTypes = TypeList<int8_t, uint8_t, int32_t>;
using ScaleTypes = TypeList<float, double, Float16, BFloat16>;

double ScalarAt(const nxrt_tensor& t, int64_t i) {
  return Dispatch(TypeList<float, double, Float16, BFloat16, int8_t, uint8_t, int32_t>{}, t.dtype,
                  "quantize", [&](auto tag) {
                    using T = typename decltype(tag)::type;
                    return static_cast<double>(static_cast<ComputeType<T>>(DataAs<T>(t)[i]));
                  });
}

// For each element, which scale/zero-point entry applies.
struct Blocks {
  int64_t outer = 1;
  int64_t channels = 1;
  int64_t inner = 1;
};

Blocks BlocksFor(const Dims& dims, const nxrt_tensor& scale, int64_t axis_attr, const char* op) {
  Blocks b;
  const int64_t count = ElementCount(scale);
  if (count <= 1) {
    b.inner = ElementCount(dims);
    return b;
  }
  const int64_t axis = NormalizeAxis(axis_attr, static_cast<int64_t>(dims.size()), op);
  if (dims[axis] != count) FailInvalid(std::string(op) + ": scale length differs from the axis");
  for (int64_t i = 0; i < axis; ++i) b.outer *= dims[i];
  b.channels = dims[axis];
  for (size_t i = axis + 1; i < dims.size(); ++i) b.inner *= dims[i];
  return b;
}

class QuantizeKernel : public CpuKernel {
 public:
  QuantizeKernel(bool quantize, int64_t axis)
      : CpuKernel(false), quantize_(quantize), axis_(axis) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const nxrt_tensor& scale = inputs[1].tensor;
    const bool has_zero = IsPresent(inputs, 2);
    const Dims dims = DimsOf(x);
    const Blocks b =
        BlocksFor(dims, scale, axis_, quantize_ ? "QuantizeLinear" : "DequantizeLinear");
    const nxrt_dtype out_dtype =
        quantize_ ? (has_zero ? inputs[2].tensor.dtype : NXRT_DTYPE_UINT8) : scale.dtype;
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, out_dtype, dims);
    auto run = [&](auto out_tag) {
      using Out = typename decltype(out_tag)::type;
      Out* y = MutableDataAs<Out>(out);
      for (int64_t o = 0; o < b.outer; ++o) {
        for (int64_t c = 0; c < b.channels; ++c) {
          const double s = ScalarAt(scale, c);
          const double zero = has_zero ? ScalarAt(inputs[2].tensor, c) : 0.0;
          for (int64_t i = 0; i < b.inner; ++i) {
            const int64_t at = (o * b.channels + c) * b.inner + i;
            const double v = ScalarAt(x, at);
            if constexpr (kIsFloat<Out>) {
              y[at] = static_cast<Out>(static_cast<ComputeType<Out>>((v - zero) * s));
            } else {
              const double q = std::nearbyint(v / s) + zero;
              y[at] = static_cast<Out>(std::clamp<double>(q, std::numeric_limits<Out>::lowest(),
                                                          std::numeric_limits<Out>::max()));
            }
          }
        }
      }
    };
    if (quantize_) {
      Dispatch(QuantizedTypes{}, out_dtype, "QuantizeLinear", run);
    } else {
      Dispatch(ScaleTypes{}, out_dtype, "DequantizeLinear", run);
    }
  }

 private:
  bool quantize_;
  int64_t axis_;
};

class DynamicQuantizeKernel : public CpuKernel {
 public:
  DynamicQuantizeKernel() : CpuKernel(false) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const Dims dims = DimsOf(x);
    const float* xp = DataAs<float>(x);
    const int64_t n = ElementCount(dims);
    float lo = 0;
    float hi = 0;
    for (int64_t i = 0; i < n; ++i) {
      lo = std::min(lo, xp[i]);
      hi = std::max(hi, xp[i]);
    }
    const float scale = (hi - lo) / 255.0f;
    const float zero = scale == 0 ? 0.0f : std::clamp(std::nearbyint(-lo / scale), 0.0f, 255.0f);
    uint8_t* y = MutableDataAs<uint8_t>(PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_UINT8, dims));
    for (int64_t i = 0; i < n; ++i) {
      const float q = scale == 0 ? zero : std::nearbyint(xp[i] / scale) + zero;
      y[i] = static_cast<uint8_t>(std::clamp(q, 0.0f, 255.0f));
    }
    *MutableDataAs<float>(PrepareOutput(ctx, outputs, 1, NXRT_DTYPE_FLOAT32, Dims{})) = scale;
    *MutableDataAs<uint8_t>(PrepareOutput(ctx, outputs, 2, NXRT_DTYPE_UINT8, Dims{})) =
        static_cast<uint8_t>(zero);
  }
};

}  // namespace

void RegisterQuantizeOps(OpRegistry& r) {
  r.Add("QuantizeLinear",
        {10,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           if (inputs.size() > 2 && inputs[2].kind != NXRT_VALUE_NONE &&
               !Contains(TypeList<int8_t, uint8_t>{}, inputs[2].dtype)) {
             return sdk::ClaimResult::Declined("QuantizeLinear: output dtype " +
                                               DtypeName(inputs[2].dtype) + " not supported");
           }
           if (node.attr_type("block_size") != NXRT_ATTR_UNDEFINED) {
             return sdk::ClaimResult::Declined("QuantizeLinear: block_size not implemented");
           }
           return ClaimUnless(CheckInputDtype(
               node, inputs, 0, TypeList<float, double, Float16, BFloat16, int32_t>{}));
         },
         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
           return std::make_unique<QuantizeKernel>(true, node.AttrInt("axis", 1));
         }});
  r.Add("DequantizeLinear",
        {10,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           if (node.attr_type("block_size") != NXRT_ATTR_UNDEFINED) {
             return sdk::ClaimResult::Declined("DequantizeLinear: block_size not implemented");
           }
           if (auto reason = CheckInputDtype(node, inputs, 1, ScaleTypes{})) {
             return sdk::ClaimResult::Declined(*reason);
           }
           return ClaimUnless(CheckInputDtype(node, inputs, 0, QuantizedTypes{}));
         },
         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
           return std::make_unique<QuantizeKernel>(false, node.AttrInt("axis", 1));
         }});
  r.Add("DynamicQuantizeLinear", {11, ClaimInputDtype(TypeList<float>{}),
                                  [](const sdk::Node&, std::span<const nxrt_shape>, int64_t) {
                                    return std::make_unique<DynamicQuantizeKernel>();
                                  }});
}

}  // namespace nxrt::cpu
