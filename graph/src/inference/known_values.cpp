#include "inference/known_values.hpp"

#include <cstring>

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

}  // namespace

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
