// Cast and CastLike between every numeric dtype, bool and string. The 16-bit
// floats convert through float with round-to-nearest-even (half.hpp); floats
// print as the shortest text that reads back to the same value, and parse
// with strtod rules (so "NaN", "INF" and "-inf" work). The 8- and 4-bit
// floats and the packed integers convert through float, which holds all
// their values exactly: to a small float by its `saturate` and rounding
// rules (small_float.hpp), to a packed integer truncated and wrapped to its
// width as the wider integers are.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cpu_kernel.hpp"
#include "packed_int.hpp"
#include "small_float.hpp"

namespace nxrt::cpu {
namespace {

template <typename From, typename To>
void CastNumbers(const nxrt_tensor& in, nxrt_tensor& out) {
  const From* x = DataAs<From>(in);
  To* y = MutableDataAs<To>(out);
  const int64_t n = ElementCount(in);
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<To, bool>) {
      y[i] = static_cast<ComputeType<From>>(x[i]) != ComputeType<From>(0);
    } else if constexpr (std::is_same_v<From, To>) {
      y[i] = x[i];
    } else if constexpr (std::is_same_v<To, Float16> || std::is_same_v<To, BFloat16>) {
      y[i] = To(static_cast<float>(static_cast<ComputeType<From>>(x[i])));
    } else {
      // Out of range for an integer type, a float saturates.
      y[i] = ConvertResult<To>(static_cast<ComputeType<From>>(x[i]));
    }
  }
}

template <typename From>
std::string FormatNumber(From v) {
  if constexpr (std::is_same_v<From, bool>) {
    return v ? "1" : "0";
  } else {
    using C = ComputeType<From>;
    const C value = static_cast<C>(v);
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(value)) return "NaN";
      if (std::isinf(value)) return value < 0 ? "-INF" : "INF";
    }
    char text[64];
    const auto end = std::to_chars(text, text + sizeof(text), value).ptr;
    return std::string(text, end);
  }
}

template <typename To>
To ParseNumber(const nxrt_string_view& s) {
  const std::string text(s.data, s.size);
  if constexpr (std::is_same_v<To, bool>) {
    return std::strtod(text.c_str(), nullptr) != 0;
  } else if constexpr (kIsFloat<To>) {
    return static_cast<To>(static_cast<ComputeType<To>>(std::strtod(text.c_str(), nullptr)));
  } else if constexpr (std::is_signed_v<To>) {
    return static_cast<To>(std::strtoll(text.c_str(), nullptr, 10));
  } else {
    return static_cast<To>(std::strtoull(text.c_str(), nullptr, 10));
  }
}

bool IsLowPrecision(nxrt_dtype dtype) {
  return IsSmallFloat(dtype) || IsPackedInt(dtype);
}

// Element i of `in` as float; exact for every low-precision dtype.
float LowPrecisionSourceAt(const nxrt_tensor& in, int64_t i) {
  if (in.dtype == NXRT_DTYPE_FLOAT4E2M1) {
    return SmallFloatToFloat(in.dtype, PackedCode(in.data, 4, i));
  }
  if (IsSmallFloat(in.dtype)) return SmallFloatToFloat(in.dtype, DataAs<uint8_t>(in)[i]);
  if (IsPackedInt(in.dtype)) return static_cast<float>(PackedIntAt(in.dtype, in.data, i));
  return Dispatch(AllTypes{}, in.dtype, "Cast", [&](auto from) {
    using From = typename decltype(from)::type;
    return static_cast<float>(static_cast<ComputeType<From>>(DataAs<From>(in)[i]));
  });
}

// Element i of `in` truncated to an integer; exact for the integer dtypes,
// whose low bits a float would lose.
int64_t IntegerSourceAt(const nxrt_tensor& in, int64_t i) {
  if (IsPackedInt(in.dtype)) return PackedIntAt(in.dtype, in.data, i);
  if (Contains(IntTypes{}, in.dtype)) {
    return Dispatch(IntTypes{}, in.dtype, "Cast", [&](auto from) {
      return static_cast<int64_t>(DataAs<typename decltype(from)::type>(in)[i]);
    });
  }
  // The clamp only keeps the float-to-int64 conversion defined.
  const float v = LowPrecisionSourceAt(in, i);
  return std::isnan(v) ? 0 : static_cast<int64_t>(std::clamp(v, -0x1p62f, 0x1p62f));
}

struct CastOptions {
  bool saturate = true;
  E8M0Rounding rounding = E8M0Rounding::kUp;
};

// Casts where either side is a small float or a packed integer.
void CastLowPrecision(const nxrt_tensor& in, nxrt_tensor& out, const CastOptions& options) {
  const int64_t n = ElementCount(in);
  const nxrt_dtype to = out.dtype;
  if (PackedBits(to) != 0) {
    std::memset(out.data, 0, out.byte_size);  // the padding bits of the last byte stay zero
    for (int64_t i = 0; i < n; ++i) {
      if (to == NXRT_DTYPE_FLOAT4E2M1) {
        SetPackedCode(out.data, 4, i,
                      SmallFloatFromFloat(to, LowPrecisionSourceAt(in, i), options.saturate));
      } else {  // like the wider integers: truncate, then keep the low bits
        SetPackedCode(out.data, PackedBits(to), i, static_cast<uint8_t>(IntegerSourceAt(in, i)));
      }
    }
  } else if (IsSmallFloat(to)) {
    uint8_t* y = MutableDataAs<uint8_t>(out);
    for (int64_t i = 0; i < n; ++i) {
      y[i] =
          SmallFloatFromFloat(to, LowPrecisionSourceAt(in, i), options.saturate, options.rounding);
    }
  } else {
    Dispatch(AllTypes{}, to, "Cast", [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      To* y = MutableDataAs<To>(out);
      for (int64_t i = 0; i < n; ++i) {
        const float v = LowPrecisionSourceAt(in, i);
        if constexpr (std::is_same_v<To, bool>) {
          y[i] = v != 0;
        } else {
          y[i] = static_cast<To>(static_cast<ComputeType<To>>(v));
        }
      }
    });
  }
}

class CastKernel : public CpuKernel {
 public:
  CastKernel(nxrt_dtype from, nxrt_dtype to, CastOptions options)
      : CpuKernel(from != NXRT_DTYPE_STRING && to != NXRT_DTYPE_STRING),
        from_(from),
        to_(to),
        options_(options) {}
  bool ServesOtherShapes() const override { return true; }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, to_, DimsSpan(in));
    const int64_t n = ElementCount(in);
    if (IsLowPrecision(from_) || IsLowPrecision(to_)) {
      CastLowPrecision(in, out, options_);
    } else if (from_ == NXRT_DTYPE_STRING && to_ == NXRT_DTYPE_STRING) {
      const auto* x = DataAs<nxrt_string_view>(in);
      for (int64_t i = 0; i < n; ++i) {
        ctx.SetStringElement(0, i, std::string_view(x[i].data, x[i].size));
      }
    } else if (to_ == NXRT_DTYPE_STRING) {
      Dispatch(AllTypes{}, from_, "Cast", [&](auto from) {
        using From = typename decltype(from)::type;
        const From* x = DataAs<From>(in);
        for (int64_t i = 0; i < n; ++i) ctx.SetStringElement(0, i, FormatNumber(x[i]));
      });
    } else if (from_ == NXRT_DTYPE_STRING) {
      Dispatch(AllTypes{}, to_, "Cast", [&](auto to) {
        using To = typename decltype(to)::type;
        const auto* x = DataAs<nxrt_string_view>(in);
        To* y = MutableDataAs<To>(out);
        for (int64_t i = 0; i < n; ++i) y[i] = ParseNumber<To>(x[i]);
      });
    } else {
      Dispatch(AllTypes{}, from_, "Cast", [&](auto from) {
        Dispatch(AllTypes{}, to_, "Cast", [&](auto to) {
          CastNumbers<typename decltype(from)::type, typename decltype(to)::type>(in, out);
        });
      });
    }
  }

 private:
  nxrt_dtype from_;
  nxrt_dtype to_;
  CastOptions options_;
};

bool Castable(nxrt_dtype dtype) {
  return dtype == NXRT_DTYPE_STRING || Contains(AllTypes{}, dtype) || IsLowPrecision(dtype);
}

// The rounding mode of a cast to float8e8m0; nullopt when unknown.
std::optional<E8M0Rounding> RoundingOf(const sdk::Node& node) {
  const std::string mode = node.AttrString("round_mode", "up");
  if (mode == "up") return E8M0Rounding::kUp;
  if (mode == "down") return E8M0Rounding::kDown;
  if (mode == "nearest") return E8M0Rounding::kNearest;
  return std::nullopt;
}

CastOptions OptionsOf(const sdk::Node& node) {
  return {node.AttrInt("saturate", 1) != 0, RoundingOf(node).value_or(E8M0Rounding::kUp)};
}

sdk::ClaimResult ClaimCast(const sdk::Node& node, nxrt_dtype from, nxrt_dtype to) {
  const std::string op(node.op_type());
  if (!Castable(from))
    return sdk::ClaimResult::Declined(op + ": from " + DtypeName(from) + " not supported");
  if (!Castable(to))
    return sdk::ClaimResult::Declined(op + ": to " + DtypeName(to) + " not supported");
  // Text of the low-precision dtypes is not implemented.
  if ((from == NXRT_DTYPE_STRING && IsLowPrecision(to)) ||
      (to == NXRT_DTYPE_STRING && IsLowPrecision(from))) {
    return sdk::ClaimResult::Declined(op + ": " + DtypeName(from) + " to " + DtypeName(to) +
                                      " not supported");
  }
  if (!RoundingOf(node)) {
    return sdk::ClaimResult::Declined(op + ": round_mode " + node.AttrString("round_mode", "") +
                                      " not supported");
  }
  return sdk::ClaimResult::Claimed();
}

// BitCast: the same bytes read as another dtype of the same width.
class BitCastKernel : public CpuKernel {
 public:
  explicit BitCastKernel(nxrt_dtype to) : CpuKernel(true), to_(to) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, to_, DimsSpan(in));
    if (out.data != in.data && in.byte_size > 0) std::memcpy(out.data, in.data, in.byte_size);
  }

 private:
  nxrt_dtype to_;
};

sdk::ClaimResult ClaimBitCast(const sdk::Node& node, std::span<const nxrt_value_info> inputs) {
  if (auto reason = CheckInputDtype(node, inputs, 0, AllTypes{})) {
    return sdk::ClaimResult::Declined(*reason);
  }
  const auto to = AttrDtype(node, "to", 0);
  if (!Contains(AllTypes{}, to)) {
    return sdk::ClaimResult::Declined("BitCast: to " + DtypeName(to) + " not supported");
  }
  if (ElementSize(to) != ElementSize(inputs[0].dtype)) {
    return sdk::ClaimResult::Declined("BitCast: " + DtypeName(inputs[0].dtype) + " and " +
                                      DtypeName(to) + " differ in width");
  }
  return sdk::ClaimResult::Claimed();
}

}  // namespace

void RegisterCastOps(OpRegistry& r) {
  r.Add("BitCast", {26,
                    [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
                      return ClaimBitCast(node, inputs);
                    },
                    [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
                      return std::make_unique<BitCastKernel>(AttrDtype(node, "to", 0));
                    }});
  r.Add("Cast", {1,
                 [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
                   if (inputs.empty())
                     return sdk::ClaimResult::Declined("Cast: input 0 is required");
                   return ClaimCast(node, inputs[0].dtype, AttrDtype(node, "to", 0));
                 },
                 [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
                   return std::make_unique<CastKernel>(inputs[0].dtype, AttrDtype(node, "to", 0),
                                                       OptionsOf(node));
                 }});
  r.Add("CastLike", {15,
                     [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
                       if (inputs.size() < 2)
                         return sdk::ClaimResult::Declined("CastLike: needs 2 inputs");
                       return ClaimCast(node, inputs[0].dtype, inputs[1].dtype);
                     },
                     [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
                       return std::make_unique<CastKernel>(inputs[0].dtype, inputs[1].dtype,
                                                           OptionsOf(node));
                     }});
}

}  // namespace nxrt::cpu
