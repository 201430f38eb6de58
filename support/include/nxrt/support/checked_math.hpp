// Overflow-checked integer arithmetic for shapes, sizes and counters.
#pragma once

#include <cstdint>
#include <optional>

namespace nxrt {

template <typename T>
std::optional<T> CheckedAdd(T a, T b) {
  T out;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

template <typename T>
std::optional<T> CheckedSub(T a, T b) {
  T out;
  if (__builtin_sub_overflow(a, b, &out)) return std::nullopt;
  return out;
}

template <typename T>
std::optional<T> CheckedMul(T a, T b) {
  T out;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

}  // namespace nxrt
