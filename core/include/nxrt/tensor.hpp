// Tensor: the dense arrays an application hands to a Session and gets back.
//
// A tensor either owns its bytes or borrows memory the caller keeps alive
// (Borrow), so inputs can be bound without a copy and an output tensor can be
// reused from run to run without allocating again. Strings are held as
// std::string elements. The memory kind tells host memory from an EP's device
// memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "nxrt/graph/dtype.hpp"
#include "nxrt/support/export.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt {

using DataType = graph::DataType;

enum class MemoryKind { kHost, kDevice };

// The dtype that holds elements of C++ type T (float -> kFloat32...).
template <typename T>
constexpr DataType DataTypeOf() {
  if constexpr (std::is_same_v<T, float>) return DataType::kFloat32;
  if constexpr (std::is_same_v<T, double>) return DataType::kFloat64;
  if constexpr (std::is_same_v<T, int8_t>) return DataType::kInt8;
  if constexpr (std::is_same_v<T, uint8_t>) return DataType::kUint8;
  if constexpr (std::is_same_v<T, int16_t>) return DataType::kInt16;
  if constexpr (std::is_same_v<T, uint16_t>) return DataType::kUint16;
  if constexpr (std::is_same_v<T, int32_t>) return DataType::kInt32;
  if constexpr (std::is_same_v<T, uint32_t>) return DataType::kUint32;
  if constexpr (std::is_same_v<T, int64_t>) return DataType::kInt64;
  if constexpr (std::is_same_v<T, uint64_t>) return DataType::kUint64;
  if constexpr (std::is_same_v<T, bool>) return DataType::kBool;
  return DataType::kUndefined;
}

class NXRT_API Tensor {
 public:
  // An empty tensor of undefined dtype: a slot for Run to fill.
  Tensor() = default;

  // An owning, zero-filled tensor. Refuses negative dims, overflowing sizes,
  // and strings (use FromStrings).
  static Result<Tensor> Zeros(DataType dtype, std::vector<int64_t> shape);
  // An owning tensor holding a copy of `values`; their count must match the shape.
  template <typename T>
  static Result<Tensor> FromValues(std::vector<int64_t> shape, std::span<const T> values) {
    NXRT_ASSIGN_OR_RETURN(Tensor t, Zeros(DataTypeOf<T>(), std::move(shape)));
    if (t.byte_size() != values.size_bytes()) {
      return InvalidArgument("tensor of " + std::to_string(t.element_count()) + " elements given " +
                             std::to_string(values.size()) + " values");
    }
    if (!values.empty()) std::memcpy(t.data(), values.data(), values.size_bytes());
    return t;
  }
  template <typename T>
  static Result<Tensor> FromValues(std::vector<int64_t> shape, const std::vector<T>& values) {
    return FromValues<T>(std::move(shape), std::span<const T>(values));
  }
  // An owning string tensor; the count must match the shape.
  static Result<Tensor> FromStrings(std::vector<int64_t> shape, std::vector<std::string> strings);
  // A view of `byte_size` bytes at `data` that the caller keeps alive and
  // unchanged in size for as long as the tensor is used.
  static Tensor Borrow(DataType dtype, std::vector<int64_t> shape, void* data, size_t byte_size,
                       MemoryKind memory = MemoryKind::kHost);

  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  MemoryKind memory() const { return memory_; }
  bool owns_data() const { return !is_borrowed_; }
  bool defined() const { return dtype_ != DataType::kUndefined; }
  size_t element_count() const;
  // Bytes of the dense layout; 0 for strings.
  size_t byte_size() const { return is_borrowed_ ? borrowed_size_ : owned_.size(); }
  void* data() { return is_borrowed_ ? borrowed_ : owned_.data(); }
  const void* data() const { return is_borrowed_ ? borrowed_ : owned_.data(); }
  const std::vector<std::string>& strings() const { return strings_; }
  std::vector<std::string>& mutable_strings() { return strings_; }

  // Typed element views; empty when T does not match the dtype.
  template <typename T>
  std::span<const T> values() const {
    if (DataTypeOf<T>() != dtype_) return {};
    return {static_cast<const T*>(data()), byte_size() / sizeof(T)};
  }
  template <typename T>
  std::span<T> mutable_values() {
    if (DataTypeOf<T>() != dtype_) return {};
    return {static_cast<T*>(data()), byte_size() / sizeof(T)};
  }

  // Gives this tensor `dtype` and `shape` in host memory, keeping the
  // storage it has when the byte size is unchanged: owned storage is reused
  // (no allocation), and borrowed host memory stays borrowed, so a run writes
  // an output into the caller's buffer. Otherwise it becomes an owning
  // tensor. Contents are unspecified afterwards.
  Status Reshape(DataType dtype, std::span<const int64_t> shape);

 private:
  DataType dtype_ = DataType::kUndefined;
  std::vector<int64_t> shape_;
  MemoryKind memory_ = MemoryKind::kHost;
  std::vector<std::byte> owned_;
  bool is_borrowed_ = false;
  void* borrowed_ = nullptr;
  size_t borrowed_size_ = 0;
  std::vector<std::string> strings_;
};

}  // namespace nxrt
