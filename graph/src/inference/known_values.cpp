#include "inference/known_values.hpp"

#include <cstring>
#include <limits>

namespace nxrt::graph::inference {
namespace {

template <typename T>
Elements Decode(const TensorData& tensor, size_t count) {
  Elements out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, tensor.bytes.data() + i * sizeof(T), sizeof(T));
    out.push_back(Dim::Static(static_cast<int64_t>(v)));
  }
  return out;
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  float magnitude;
  if (exponent == 0) {
    magnitude = static_cast<float>(mantissa) * (1.0f / 16777216.0f);  // subnormal: m * 2^-24
  } else if (exponent == 31) {
    magnitude =
        mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    uint32_t bits = ((exponent + 112u) << 23) | (mantissa << 13);
    std::memcpy(&magnitude, &bits, sizeof(bits));
  }
  return sign ? -magnitude : magnitude;
}

template <typename T>
double LoadAs(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return static_cast<double>(v);
}

}  // namespace

std::optional<std::vector<double>> NumbersOfTensor(const TensorData& tensor, size_t max_elements) {
  size_t count = 1;
  for (int64_t d : tensor.dims) {
    if (d < 0) return std::nullopt;
    count *= static_cast<size_t>(d);
    if (count > max_elements) return std::nullopt;
  }
  const size_t bytes = DataTypeBits(tensor.dtype) / 8;
  if (bytes == 0 || tensor.bytes.size() < count * bytes) return std::nullopt;
  std::vector<double> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const std::byte* p = tensor.bytes.data() + i * bytes;
    uint16_t half;
    uint32_t widened;
    float f;
    switch (tensor.dtype) {
      case DataType::kFloat32:
        out.push_back(LoadAs<float>(p));
        break;
      case DataType::kFloat64:
        out.push_back(LoadAs<double>(p));
        break;
      case DataType::kFloat16:
        std::memcpy(&half, p, sizeof(half));
        out.push_back(HalfToFloat(half));
        break;
      case DataType::kBfloat16:
        std::memcpy(&half, p, sizeof(half));
        widened = static_cast<uint32_t>(half) << 16;
        std::memcpy(&f, &widened, sizeof(f));
        out.push_back(f);
        break;
      case DataType::kInt64:
        out.push_back(LoadAs<int64_t>(p));
        break;
      case DataType::kInt32:
        out.push_back(LoadAs<int32_t>(p));
        break;
      default:
        return std::nullopt;
    }
  }
  return out;
}

bool IsTrackedDtype(DataType dtype) {
  switch (dtype) {
    case DataType::kInt64:
    case DataType::kInt32:
    case DataType::kInt16:
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kUint16:
    case DataType::kUint32:
    case DataType::kBool:
      return true;
    default:
      return false;
  }
}

std::optional<Elements> ElementsOfTensor(const TensorData& tensor, size_t max_elements) {
  size_t count = 1;
  for (int64_t d : tensor.dims) {
    if (d < 0) return std::nullopt;
    count *= static_cast<size_t>(d);
    if (count > max_elements) return std::nullopt;
  }
  const size_t bits = DataTypeBits(tensor.dtype);
  if (!IsTrackedDtype(tensor.dtype) || tensor.bytes.size() < count * bits / 8) return std::nullopt;
  switch (tensor.dtype) {
    case DataType::kInt64:
      return Decode<int64_t>(tensor, count);
    case DataType::kInt32:
      return Decode<int32_t>(tensor, count);
    case DataType::kInt16:
      return Decode<int16_t>(tensor, count);
    case DataType::kInt8:
      return Decode<int8_t>(tensor, count);
    case DataType::kUint8:
    case DataType::kBool:
      return Decode<uint8_t>(tensor, count);
    case DataType::kUint16:
      return Decode<uint16_t>(tensor, count);
    case DataType::kUint32:
      return Decode<uint32_t>(tensor, count);
    default:
      return std::nullopt;
  }
}

}  // namespace nxrt::graph::inference
