// Element types as C++ types: the nxrt_dtype of a C++ type, the size and
// name of a dtype, and dispatch from a runtime dtype to a template over the
// C++ type, restricted to a list of types an op supports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>

#include "half.hpp"
#include "nxrt/ep_abi.h"
#include "nxrt/ep_sdk.hpp"

namespace nxrt::cpu {

template <typename T>
struct DtypeTraits;
#define NXRT_CPU_DTYPE(type, code)             \
  template <>                                  \
  struct DtypeTraits<type> {                   \
    static constexpr nxrt_dtype kDtype = code; \
  };
NXRT_CPU_DTYPE(float, NXRT_DTYPE_FLOAT32)
NXRT_CPU_DTYPE(double, NXRT_DTYPE_FLOAT64)
NXRT_CPU_DTYPE(Float16, NXRT_DTYPE_FLOAT16)
NXRT_CPU_DTYPE(BFloat16, NXRT_DTYPE_BFLOAT16)
NXRT_CPU_DTYPE(int8_t, NXRT_DTYPE_INT8)
NXRT_CPU_DTYPE(int16_t, NXRT_DTYPE_INT16)
NXRT_CPU_DTYPE(int32_t, NXRT_DTYPE_INT32)
NXRT_CPU_DTYPE(int64_t, NXRT_DTYPE_INT64)
NXRT_CPU_DTYPE(uint8_t, NXRT_DTYPE_UINT8)
NXRT_CPU_DTYPE(uint16_t, NXRT_DTYPE_UINT16)
NXRT_CPU_DTYPE(uint32_t, NXRT_DTYPE_UINT32)
NXRT_CPU_DTYPE(uint64_t, NXRT_DTYPE_UINT64)
NXRT_CPU_DTYPE(bool, NXRT_DTYPE_BOOL)
#undef NXRT_CPU_DTYPE

template <typename T>
inline constexpr nxrt_dtype kDtypeOf = DtypeTraits<T>::kDtype;

// The type arithmetic runs in: float for the 16-bit floats, T otherwise.
template <typename T>
using ComputeType =
    std::conditional_t<std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>, float, T>;

// Copies `count` values of T into C, converting each (16-bit floats widen
// to their compute type this way).
template <typename T, typename C>
void Widen(const T* src, int64_t count, C* dst) {
  for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<C>(src[i]);
}

template <typename T>
inline constexpr bool kIsFloat =
    std::is_floating_point_v<T> || std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

using sdk::DtypeName;
using sdk::ElementSize;

template <typename... Ts>
struct TypeList {};

using FloatTypes = TypeList<float, double, Float16, BFloat16>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using UnsignedIntTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using IntTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
using SignedTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t>;
using NumericTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t,
                              uint8_t, uint16_t, uint32_t, uint64_t>;
using AllTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t,
                          uint8_t, uint16_t, uint32_t, uint64_t, bool>;
using IndexTypes = TypeList<int32_t, int64_t>;

template <typename... Ts>
constexpr bool Contains(TypeList<Ts...>, nxrt_dtype dtype) {
  return ((kDtypeOf<Ts> == dtype) || ...);
}

// Calls fn(std::type_identity<T>{}) for the T of `dtype` in `List`; throws
// UNSUPPORTED naming `what` and the dtype when it is not in the list.
template <typename... Ts, typename Fn>
decltype(auto) Dispatch(TypeList<Ts...>, nxrt_dtype dtype, const std::string& what, Fn&& fn) {
  using Result = decltype(fn(std::type_identity<std::tuple_element_t<0, std::tuple<Ts...>>>{}));
  if constexpr (std::is_void_v<Result>) {
    const bool found =
        ((kDtypeOf<Ts> == dtype ? (fn(std::type_identity<Ts>{}), true) : false) || ...);
    if (!found) {
      throw sdk::Error(NXRT_STATUS_UNSUPPORTED,
                       what + ": dtype " + DtypeName(dtype) + " not supported");
    }
  } else {
    Result result{};
    const bool found =
        ((kDtypeOf<Ts> == dtype ? (result = fn(std::type_identity<Ts>{}), true) : false) || ...);
    if (!found) {
      throw sdk::Error(NXRT_STATUS_UNSUPPORTED,
                       what + ": dtype " + DtypeName(dtype) + " not supported");
    }
    return result;
  }
}

// A floating value as integer type I: out-of-range values saturate and NaN
// gives 0, where a plain conversion would be undefined behaviour.
template <typename I, typename F>
inline I SaturatingCast(F v) {
  static_assert(std::is_integral_v<I> && std::is_floating_point_v<F>);
  constexpr F kLowest = static_cast<F>(std::numeric_limits<I>::min());
  constexpr F kHighest = static_cast<F>(std::numeric_limits<I>::max());  // may round up
  if (!(v == v)) return 0;
  if (v <= kLowest) return std::numeric_limits<I>::min();
  if (v >= kHighest) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

// An op's result as its output type: a floating result bound for an integer
// type saturates (SaturatingCast); every other pair converts as static_cast.
template <typename Out, typename V>
inline Out ConvertResult(V v) {
  if constexpr (std::is_integral_v<Out> && !std::is_same_v<Out, bool> &&
                std::is_floating_point_v<V>) {
    return SaturatingCast<Out>(v);
  } else {
    return static_cast<Out>(v);
  }
}

}  // namespace nxrt::cpu
