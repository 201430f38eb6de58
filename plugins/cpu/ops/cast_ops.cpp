// Cast and CastLike between every numeric dtype, bool and string. The 16-bit
// floats convert through float with round-to-nearest-even (half.hpp); floats
// print as the shortest text that reads back to the same value, and parse
// with strtod rules (so "NaN", "INF" and "-inf" work).
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include "cpu_kernel.hpp"

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
      y[i] = static_cast<To>(static_cast<ComputeType<From>>(x[i]));
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

class CastKernel : public CpuKernel {
 public:
  CastKernel(nxrt_dtype from, nxrt_dtype to)
      : CpuKernel(from != NXRT_DTYPE_STRING && to != NXRT_DTYPE_STRING), from_(from), to_(to) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, to_, DimsSpan(in));
    const int64_t n = ElementCount(in);
    if (from_ == NXRT_DTYPE_STRING && to_ == NXRT_DTYPE_STRING) {
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
};

bool Castable(nxrt_dtype dtype) {
  return dtype == NXRT_DTYPE_STRING || Contains(AllTypes{}, dtype);
}

sdk::ClaimResult ClaimCast(const std::string& op, nxrt_dtype from, nxrt_dtype to) {
  if (!Castable(from))
    return sdk::ClaimResult::Declined(op + ": from " + DtypeName(from) + " not supported");
  if (!Castable(to))
    return sdk::ClaimResult::Declined(op + ": to " + DtypeName(to) + " not supported");
  return sdk::ClaimResult::Claimed();
}

}  // namespace

void RegisterCastOps(OpRegistry& r) {
  r.Add("Cast", {1,
                 [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
                   if (inputs.empty())
                     return sdk::ClaimResult::Declined("Cast: input 0 is required");
                   return ClaimCast("Cast", inputs[0].dtype,
                                    static_cast<nxrt_dtype>(node.AttrInt("to", 0)));
                 },
                 [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
                   return std::make_unique<CastKernel>(
                       inputs[0].dtype, static_cast<nxrt_dtype>(node.AttrInt("to", 0)));
                 }});
  r.Add("CastLike", {15,
                     [](const sdk::Node&, int64_t, std::span<const nxrt_value_info> inputs) {
                       if (inputs.size() < 2)
                         return sdk::ClaimResult::Declined("CastLike: needs 2 inputs");
                       return ClaimCast("CastLike", inputs[0].dtype, inputs[1].dtype);
                     },
                     [](const sdk::Node&, std::span<const nxrt_shape> inputs, int64_t) {
                       return std::make_unique<CastKernel>(inputs[0].dtype, inputs[1].dtype);
                     }});
}

}  // namespace nxrt::cpu
