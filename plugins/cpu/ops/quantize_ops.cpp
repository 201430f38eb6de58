// Linear quantisation: QuantizeLinear and DequantizeLinear, per tensor, per
// axis (1-D scales) or per block along an axis (`block_size`, scales of the
// input's rank), to and from the 8-, 16- and 32-bit integers, the packed
// int4/uint4/int2/uint2, the float8 formats and float4e2m1; and
// DynamicQuantizeLinear, which picks a uint8 scale and zero point from the
// data's range. Integer results round to nearest even, then saturate; float8
// results convert by the `saturate` attribute (small_float.hpp). Between
// float32 and the 8-bit integers, per tensor or per axis, the int8 models'
// form, they run in vectorised loops (quantized/byte_quantization.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cpu_kernel.hpp"
#include "packed_int.hpp"
#include "quantized/byte_quantization.hpp"
#include "quantized/saturating_round.hpp"
#include "small_float.hpp"

namespace nxrt::cpu {
namespace {

using WideTypes =
    TypeList<float, double, Float16, BFloat16, int8_t, uint8_t, int16_t, uint16_t, int32_t>;
using ScaleTypes = TypeList<float, double, Float16, BFloat16>;

// The quantized dtypes beyond WideTypes' integers.
bool IsLowPrecision(nxrt_dtype dtype) {
  return IsSmallFloat(dtype) || IsPackedInt(dtype);
}

bool IsQuantized(nxrt_dtype dtype) {
  return Contains(TypeList<int8_t, uint8_t, int16_t, uint16_t, int32_t>{}, dtype) ||
         (IsLowPrecision(dtype) && dtype != NXRT_DTYPE_FLOAT8E8M0);
}

// Element i of a scale, zero point or data tensor as double (exact for all
// the dtypes here).
double ValueAt(const nxrt_tensor& t, int64_t i) {
  if (t.dtype == NXRT_DTYPE_FLOAT4E2M1) return SmallFloatToFloat(t.dtype, PackedCode(t.data, 4, i));
  if (IsSmallFloat(t.dtype)) return SmallFloatToFloat(t.dtype, DataAs<uint8_t>(t)[i]);
  if (IsPackedInt(t.dtype)) return PackedIntAt(t.dtype, t.data, i);
  return Dispatch(WideTypes{}, t.dtype, "quantize", [&](auto tag) {
    using T = typename decltype(tag)::type;
    return static_cast<double>(static_cast<ComputeType<T>>(DataAs<T>(t)[i]));
  });
}

// x / scale rounded to the dtype the division runs in: the common dtype of x
// and the scale, float32 when they differ (double when either is double or x
// is int32), so a quotient near .5 rounds as in that dtype.
double QuotientIn(nxrt_dtype x, nxrt_dtype scale, double q) {
  if (x != scale) {
    const bool wide =
        x == NXRT_DTYPE_FLOAT64 || scale == NXRT_DTYPE_FLOAT64 || x == NXRT_DTYPE_INT32;
    return wide ? q : static_cast<float>(q);
  }
  switch (x) {
    case NXRT_DTYPE_FLOAT32:
      return static_cast<float>(q);
    case NXRT_DTYPE_FLOAT16:
      return Float16(static_cast<float>(q));
    case NXRT_DTYPE_BFLOAT16:
      return BFloat16(static_cast<float>(q));
    default:
      return q;
  }
}

// Which scale/zero-point entry applies to each element: with the data viewed
// as [outer, channels, inner] around the axis, element (o, c, i) uses entry
// o * outer_stride + (c / block) * channel_stride + i * inner_stride.
struct ScaleMap {
  int64_t outer = 1;
  int64_t channels = 1;
  int64_t inner = 1;
  int64_t block = 1;
  int64_t outer_stride = 0;
  int64_t channel_stride = 0;
  int64_t inner_stride = 0;
};

ScaleMap ScaleMapFor(const Dims& dims, const nxrt_tensor& scale, int64_t axis_attr,
                     int64_t block_size, const char* op) {
  ScaleMap m;
  const int64_t count = ElementCount(scale);
  if (block_size <= 0 && count == 1) {
    m.inner = ElementCount(dims);
    return m;
  }
  const int64_t axis = NormalizeAxis(axis_attr, static_cast<int64_t>(dims.size()), op);
  for (int64_t i = 0; i < axis; ++i) m.outer *= dims[i];
  m.channels = dims[axis];
  for (size_t i = axis + 1; i < dims.size(); ++i) m.inner *= dims[i];
  if (block_size <= 0) {
    if (dims[axis] != count) FailInvalid(std::string(op) + ": scale length differs from the axis");
    m.channel_stride = 1;
    return m;
  }
  const Dims scale_dims = DimsOf(scale);
  bool fits = scale_dims.size() == dims.size();
  for (size_t i = 0; fits && i < dims.size(); ++i) {
    const int64_t want =
        static_cast<int64_t>(i) == axis ? (dims[i] + block_size - 1) / block_size : dims[i];
    fits = scale_dims[i] == want;
  }
  if (!fits) {
    FailInvalid(std::string(op) + ": scale shape " + DimsText(scale_dims) +
                " does not block input " + DimsText(dims) + " by " + std::to_string(block_size));
  }
  m.block = block_size;
  m.outer_stride = scale_dims[axis] * m.inner;
  m.channel_stride = m.inner;
  m.inner_stride = 1;
  return m;
}

// Stores values[i], already divided by the scale and offset by the zero
// point, as element i of a quantized tensor.
void StoreQuantized(nxrt_tensor& out, const std::vector<double>& values, bool saturate) {
  const nxrt_dtype dtype = out.dtype;
  const auto rounded = [](double v) {
    return std::isnan(v) ? int64_t{0}
                         : static_cast<int64_t>(std::nearbyint(std::clamp(v, -0x1p62, 0x1p62)));
  };
  if (PackedBits(dtype) != 0) {
    std::fill_n(static_cast<uint8_t*>(out.data), out.byte_size, uint8_t{0});
    for (size_t i = 0; i < values.size(); ++i) {
      if (dtype == NXRT_DTYPE_FLOAT4E2M1) {
        SetPackedCode(out.data, 4, static_cast<int64_t>(i),
                      SmallFloatFromFloat(dtype, static_cast<float>(values[i]), saturate));
      } else {
        SetPackedInt(dtype, out.data, static_cast<int64_t>(i), rounded(values[i]));
      }
    }
  } else if (IsSmallFloat(dtype)) {
    uint8_t* y = MutableDataAs<uint8_t>(out);
    for (size_t i = 0; i < values.size(); ++i) {
      y[i] = SmallFloatFromFloat(dtype, static_cast<float>(values[i]), saturate);
    }
  } else {
    Dispatch(TypeList<int8_t, uint8_t, int16_t, uint16_t, int32_t>{}, dtype, "QuantizeLinear",
             [&](auto tag) {
               using Out = typename decltype(tag)::type;
               Out* y = MutableDataAs<Out>(out);
               for (size_t i = 0; i < values.size(); ++i) {
                 y[i] = static_cast<Out>(std::clamp<int64_t>(rounded(values[i]),
                                                             std::numeric_limits<Out>::lowest(),
                                                             std::numeric_limits<Out>::max()));
               }
             });
  }
}

struct QuantizeOptions {
  int64_t axis = 1;
  int64_t block_size = 0;
  bool saturate = true;
  nxrt_dtype output_dtype = NXRT_DTYPE_UNDEFINED;  // the `output_dtype` attribute
};

QuantizeOptions OptionsOf(const sdk::Node& node) {
  return {node.AttrInt("axis", 1), node.AttrInt("block_size", 0), node.AttrInt("saturate", 1) != 0,
          AttrDtype(node, "output_dtype", NXRT_DTYPE_UNDEFINED)};
}

class QuantizeKernel : public CpuKernel {
 public:
  QuantizeKernel(bool quantize, QuantizeOptions options)
      : CpuKernel(false), quantize_(quantize), options_(options) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const nxrt_tensor& scale = inputs[1].tensor;
    const bool has_zero = IsPresent(inputs, 2);
    const Dims dims = DimsOf(x);
    const char* op = quantize_ ? "QuantizeLinear" : "DequantizeLinear";
    const ScaleMap m = ScaleMapFor(dims, scale, options_.axis, options_.block_size, op);
    if (has_zero && ElementCount(inputs[2].tensor) != ElementCount(scale)) {
      FailInvalid(std::string(op) + ": the zero point holds " +
                  std::to_string(ElementCount(inputs[2].tensor)) + " values and the scale " +
                  std::to_string(ElementCount(scale)) + "; give them one shape");
    }
    const nxrt_dtype out_dtype = OutputDtype(inputs);
    if (RunsOnBytes(x, scale, out_dtype)) {
      nxrt_tensor& y = PrepareOutput(ctx, outputs, 0, out_dtype, dims);
      const ChannelView view{m.outer, m.channels, m.inner};
      const nxrt_dtype bytes = quantize_ ? out_dtype : x.dtype;
      Dispatch(TypeList<uint8_t, int8_t>{}, bytes, op, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* zero = has_zero ? DataAs<T>(inputs[2].tensor) : nullptr;
        if (quantize_) {
          QuantizeBytes(DataAs<float>(x), view, DataAs<float>(scale), zero, MutableDataAs<T>(y));
        } else {
          DequantizeBytes(DataAs<T>(x), view, DataAs<float>(scale), zero, MutableDataAs<float>(y));
        }
      });
      return;
    }
    const bool integer_out = !IsSmallFloat(out_dtype);
    std::vector<double> values(static_cast<size_t>(ElementCount(dims)));
    for (int64_t o = 0; o < m.outer; ++o) {
      for (int64_t c = 0; c < m.channels; ++c) {
        for (int64_t i = 0; i < m.inner; ++i) {
          const int64_t at = (o * m.channels + c) * m.inner + i;
          const int64_t k =
              o * m.outer_stride + (c / m.block) * m.channel_stride + i * m.inner_stride;
          const double s = ValueAt(scale, k);
          const double zero = has_zero ? ValueAt(inputs[2].tensor, k) : 0.0;
          if (!quantize_) {
            values[at] = (ValueAt(x, at) - zero) * s;
          } else {
            // ONNX rounds x / scale to an integer, then adds the zero point.
            const double q = QuotientIn(x.dtype, scale.dtype, ValueAt(x, at) / s);
            values[at] = (integer_out ? std::nearbyint(q) : q) + zero;
          }
        }
      }
    }
    if (quantize_) {
      StoreQuantized(PrepareOutput(ctx, outputs, 0, out_dtype, dims), values, options_.saturate);
      return;
    }
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, out_dtype, dims);
    Dispatch(ScaleTypes{}, out_dtype, "DequantizeLinear", [&](auto tag) {
      using Out = typename decltype(tag)::type;
      Out* y = MutableDataAs<Out>(out);
      for (size_t i = 0; i < values.size(); ++i) {
        y[i] = static_cast<Out>(static_cast<ComputeType<Out>>(values[i]));
      }
    });
  }

 private:
  // Whether the call is between float32 and an 8-bit integer with float32
  // scales, per tensor or per axis.
  bool RunsOnBytes(const nxrt_tensor& x, const nxrt_tensor& scale, nxrt_dtype out_dtype) const {
    const auto is_byte = [](nxrt_dtype d) { return d == NXRT_DTYPE_UINT8 || d == NXRT_DTYPE_INT8; };
    if (options_.block_size > 0 || scale.dtype != NXRT_DTYPE_FLOAT32) return false;
    return quantize_ ? x.dtype == NXRT_DTYPE_FLOAT32 && is_byte(out_dtype)
                     : is_byte(x.dtype) && out_dtype == NXRT_DTYPE_FLOAT32;
  }

  // QuantizeLinear: the zero point's dtype, else `output_dtype`, else uint8.
  // DequantizeLinear: `output_dtype`, else the scale's dtype.
  nxrt_dtype OutputDtype(std::span<const nxrt_value> inputs) const {
    if (options_.output_dtype != NXRT_DTYPE_UNDEFINED && !(quantize_ && IsPresent(inputs, 2))) {
      return options_.output_dtype;
    }
    if (!quantize_) return inputs[1].tensor.dtype;
    return IsPresent(inputs, 2) ? inputs[2].tensor.dtype : NXRT_DTYPE_UINT8;
  }

  bool quantize_;
  QuantizeOptions options_;
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
    RangeWithZero(xp, n, lo, hi);
    const float scale = (hi - lo) / 255.0f;
    const uint8_t zero = scale == 0 ? 0 : SaturatingRound<uint8_t>(-lo / scale, 0.0f);
    uint8_t* y = MutableDataAs<uint8_t>(PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_UINT8, dims));
    if (scale == 0) {
      std::fill_n(y, n, zero);
    } else {
      QuantizeBytes(xp, ChannelView{1, 1, n}, &scale, &zero, y);
    }
    *MutableDataAs<float>(PrepareOutput(ctx, outputs, 1, NXRT_DTYPE_FLOAT32, Dims{})) = scale;
    *MutableDataAs<uint8_t>(PrepareOutput(ctx, outputs, 2, NXRT_DTYPE_UINT8, Dims{})) = zero;
  }
};

// Why QuantizeLinear or DequantizeLinear is declined, or nullopt.
std::optional<std::string> CheckQuantize(const sdk::Node& node,
                                         std::span<const nxrt_value_info> inputs, bool quantize) {
  const std::string op(node.op_type());
  const QuantizeOptions options = OptionsOf(node);
  if (auto reason = CheckInputDtype(node, inputs, 1, ScaleTypes{})) return reason;
  const bool has_zero = inputs.size() > 2 && inputs[2].kind != NXRT_VALUE_NONE;
  if (quantize) {
    if (auto reason = CheckInputDtype(node, inputs, 0,
                                      TypeList<float, double, Float16, BFloat16, int32_t>{})) {
      return reason;
    }
    const nxrt_dtype out = has_zero                                       ? inputs[2].dtype
                           : options.output_dtype != NXRT_DTYPE_UNDEFINED ? options.output_dtype
                                                                          : NXRT_DTYPE_UINT8;
    if (!IsQuantized(out) || out == NXRT_DTYPE_INT32) {
      return op + ": output dtype " + DtypeName(out) + " not supported";
    }
  } else {
    if (inputs.empty() || inputs[0].kind != NXRT_VALUE_TENSOR || !IsQuantized(inputs[0].dtype)) {
      return op + ": dtype " + (inputs.empty() ? std::string("none") : DtypeName(inputs[0].dtype)) +
             " not supported";
    }
    if (options.output_dtype != NXRT_DTYPE_UNDEFINED &&
        !Contains(ScaleTypes{}, options.output_dtype)) {
      return op + ": output dtype " + DtypeName(options.output_dtype) + " not supported";
    }
  }
  if (node.attr_type("precision") != NXRT_ATTR_UNDEFINED) {
    return op + ": precision attribute not implemented";
  }
  return std::nullopt;
}

}  // namespace

void RegisterQuantizeOps(OpRegistry& r) {
  r.Add("QuantizeLinear",
        {10,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           return ClaimUnless(CheckQuantize(node, inputs, true));
         },
         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
           return std::make_unique<QuantizeKernel>(true, OptionsOf(node));
         }});
  r.Add("DequantizeLinear",
        {10,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           return ClaimUnless(CheckQuantize(node, inputs, false));
         },
         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
           return std::make_unique<QuantizeKernel>(false, OptionsOf(node));
         }});
  r.Add("DynamicQuantizeLinear", {11, ClaimInputDtype(TypeList<float>{}),
                                  [](const sdk::Node&, std::span<const nxrt_shape>, int64_t) {
                                    return std::make_unique<DynamicQuantizeKernel>();
                                  }});
}

}  // namespace nxrt::cpu
