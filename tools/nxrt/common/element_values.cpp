#include "common/element_values.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>

namespace nxrt::cli {
namespace {

template <typename T>
T Load(const void* data, size_t index) {
  T value;
  std::memcpy(&value, static_cast<const std::byte*>(data) + index * sizeof(T), sizeof(T));
  return value;
}

double HalfToDouble(uint16_t half) {
  const int exponent = (half >> 10) & 0x1F;
  const int mantissa = half & 0x3FF;
  double magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(mantissa, -24);
  } else if (exponent == 31) {
    magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
  } else {
    magnitude = std::ldexp(mantissa | 0x400, exponent - 25);
  }
  return (half & 0x8000) ? -magnitude : magnitude;
}

double BfloatToDouble(uint16_t bfloat) {
  const uint32_t bits = static_cast<uint32_t>(bfloat) << 16;
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// Bytes per scalar, 0 when not readable.
size_t ScalarBytes(DataType dtype) {
  switch (dtype) {
    case DataType::kBool:
    case DataType::kInt8:
    case DataType::kUint8:
      return 1;
    case DataType::kFloat16:
    case DataType::kBfloat16:
    case DataType::kInt16:
    case DataType::kUint16:
      return 2;
    case DataType::kFloat32:
    case DataType::kComplex64:
    case DataType::kInt32:
    case DataType::kUint32:
      return 4;
    case DataType::kFloat64:
    case DataType::kComplex128:
    case DataType::kInt64:
    case DataType::kUint64:
      return 8;
    default:
      return 0;
  }
}

}  // namespace

bool IsFloatingPoint(DataType dtype) {
  return dtype == DataType::kFloat16 || dtype == DataType::kBfloat16 ||
         dtype == DataType::kFloat32 || dtype == DataType::kFloat64 ||
         dtype == DataType::kComplex64 || dtype == DataType::kComplex128;
}

size_t ScalarCount(DataType dtype, size_t byte_size) {
  const size_t bytes = ScalarBytes(dtype);
  return bytes == 0 ? 0 : byte_size / bytes;
}

double ReadScalar(DataType dtype, const void* data, size_t index) {
  switch (dtype) {
    case DataType::kBool:
      return Load<uint8_t>(data, index) != 0;
    case DataType::kInt8:
      return Load<int8_t>(data, index);
    case DataType::kUint8:
      return Load<uint8_t>(data, index);
    case DataType::kInt16:
      return Load<int16_t>(data, index);
    case DataType::kUint16:
      return Load<uint16_t>(data, index);
    case DataType::kInt32:
      return Load<int32_t>(data, index);
    case DataType::kUint32:
      return Load<uint32_t>(data, index);
    case DataType::kInt64:
      return static_cast<double>(Load<int64_t>(data, index));
    case DataType::kUint64:
      return static_cast<double>(Load<uint64_t>(data, index));
    case DataType::kFloat16:
      return HalfToDouble(Load<uint16_t>(data, index));
    case DataType::kBfloat16:
      return BfloatToDouble(Load<uint16_t>(data, index));
    case DataType::kFloat32:
    case DataType::kComplex64:
      return Load<float>(data, index);
    case DataType::kFloat64:
    case DataType::kComplex128:
      return Load<double>(data, index);
    default:
      return std::numeric_limits<double>::quiet_NaN();
  }
}

std::string FormatScalar(DataType dtype, const void* data, size_t index) {
  switch (dtype) {
    case DataType::kBool:
      return Load<uint8_t>(data, index) ? "true" : "false";
    case DataType::kInt64:
      return std::to_string(Load<int64_t>(data, index));
    case DataType::kUint64:
      return std::to_string(Load<uint64_t>(data, index));
    default:
      break;
  }
  const double value = ReadScalar(dtype, data, index);
  if (!IsFloatingPoint(dtype)) return std::to_string(static_cast<int64_t>(value));
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return text;
}

}  // namespace nxrt::cli
