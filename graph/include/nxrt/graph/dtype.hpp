// Element types of tensors; the numbering is ONNX's TensorProto.DataType, so
// the ABI's nxrt_dtype and the protobuf enum convert by value.
#pragma once

#include "nxrt/support/export.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace nxrt::graph {

enum class DataType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBfloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUint2 = 25,
  kInt2 = 26,
};

// The DataType for an ONNX enum value, or nullopt for a value nxrt does not know.
NXRT_API std::optional<DataType> DataTypeFromOnnx(int32_t onnx_type);

// Lower-case ONNX spelling: "float", "int64", "bfloat16"...
NXRT_API std::string_view DataTypeName(DataType type);

// Bits per element (4 or 2 for the packed types, 0 for string and undefined).
NXRT_API size_t DataTypeBits(DataType type);

}  // namespace nxrt::graph
