#include "common/random_tensor.hpp"

#include <charconv>
#include <cstring>
#include <optional>
#include <vector>

#include "nxrt/graph/dtype.hpp"

namespace nxrt::cli {
namespace {

std::string FormatShape(const std::vector<int64_t>& dims) {
  std::string text;
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  return dims.empty() ? "scalar" : text;
}

std::optional<int64_t> StaticExtent(const std::string& dim) {
  int64_t extent = 0;
  const auto [end, error] = std::from_chars(dim.data(), dim.data() + dim.size(), extent);
  if (error != std::errc() || end != dim.data() + dim.size()) return std::nullopt;
  return extent;
}

Result<std::vector<int64_t>> WholeShape(const ValueDescription& input,
                                        const std::vector<int64_t>& given) {
  const std::string option = "--shape " + input.name + "=" + FormatShape(given);
  if (!input.rank_known) return given;
  if (given.size() != input.shape.size()) {
    return InvalidArgument(option + ": the model declares rank " +
                           std::to_string(input.shape.size()) + "; give that many dims");
  }
  for (size_t i = 0; i < given.size(); ++i) {
    const std::optional<int64_t> declared = StaticExtent(input.shape[i]);
    if (declared && *declared != given[i]) {
      return InvalidArgument(option + ": dim " + std::to_string(i) + " is declared " +
                             input.shape[i] + "; give that extent");
    }
  }
  return given;
}

Result<std::vector<int64_t>> ConcreteShape(const ValueDescription& input,
                                           const RandomShapes& shapes) {
  const auto whole = shapes.shapes.find(input.name);
  if (whole != shapes.shapes.end()) return WholeShape(input, whole->second);
  if (!input.rank_known) {
    return InvalidArgument("input '" + input.name +
                           "' has no declared shape, so no random value can be made for it "
                           "without one; pass --shape " +
                           input.name + "=D,D,... (or =scalar) or --input " + input.name +
                           "=FILE.pb");
  }
  std::vector<int64_t> shape;
  for (const std::string& dim : input.shape) {
    if (const std::optional<int64_t> extent = StaticExtent(dim)) {
      shape.push_back(*extent);
      continue;
    }
    const auto bound = shapes.dims.find(dim);
    if (bound == shapes.dims.end()) {
      return InvalidArgument("input '" + input.name + "' has symbolic dim '" + dim +
                             "' with no value; pass --dim " + dim + "=VALUE, or --shape " +
                             input.name + "=D,D,... for the whole shape");
    }
    shape.push_back(bound->second);
  }
  return shape;
}

uint16_t FloatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  const uint32_t sign = (bits >> 16) & 0x8000;
  const int exponent = static_cast<int>((bits >> 23) & 0xFF) - 127 + 15;
  // Values here lie in [-1, 1): tiny ones flush to zero, none overflow.
  if (exponent <= 0) return static_cast<uint16_t>(sign);
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exponent) << 10) |
                               ((bits >> 13) & 0x3FF));
}

// An attention mask of ones keeps every position valid, as the decoder
// inputs of a real prompt are; random 0..3 would claim more tokens than the
// KV cache holds.
template <typename T>
void FillIntegers(Tensor& tensor, std::mt19937_64& generator, bool attention_mask) {
  std::uniform_int_distribution<int> digits(attention_mask ? 1 : 0, attention_mask ? 1 : 3);
  for (T& value : tensor.mutable_values<T>()) value = static_cast<T>(digits(generator));
}

}  // namespace

Result<Tensor> RandomTensor(const ValueDescription& input, const RandomShapes& shapes,
                            std::mt19937_64& generator) {
  NXRT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ConcreteShape(input, shapes));
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  if (input.dtype == DataType::kString) {
    Tensor probe;
    NXRT_RETURN_IF_ERROR(probe.Reshape(DataType::kString, shape));
    std::vector<std::string> words(probe.element_count());
    std::uniform_int_distribution<int> letters('a', 'z');
    for (std::string& word : words) {
      for (int i = 0; i < 4; ++i) word += static_cast<char>(letters(generator));
    }
    return Tensor::FromStrings(std::move(shape), std::move(words));
  }
  NXRT_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Zeros(input.dtype, std::move(shape)));
  const bool mask = input.name == "attention_mask";
  switch (input.dtype) {
    case DataType::kFloat32:
      for (float& value : tensor.mutable_values<float>()) value = unit(generator);
      break;
    case DataType::kFloat64:
      for (double& value : tensor.mutable_values<double>()) value = unit(generator);
      break;
    case DataType::kFloat16:
    case DataType::kBfloat16: {
      auto* halves = static_cast<uint16_t*>(tensor.data());
      for (size_t i = 0; i < tensor.element_count(); ++i) {
        const float value = unit(generator);
        if (input.dtype == DataType::kFloat16) {
          halves[i] = FloatToHalf(value);
        } else {
          uint32_t bits;
          std::memcpy(&bits, &value, sizeof(bits));
          halves[i] = static_cast<uint16_t>(bits >> 16);
        }
      }
      break;
    }
    case DataType::kBool: {
      std::bernoulli_distribution coin;
      for (bool& value : tensor.mutable_values<bool>()) value = coin(generator);
      break;
    }
    case DataType::kInt8:
      FillIntegers<int8_t>(tensor, generator, mask);
      break;
    case DataType::kUint8:
      FillIntegers<uint8_t>(tensor, generator, mask);
      break;
    case DataType::kInt16:
      FillIntegers<int16_t>(tensor, generator, mask);
      break;
    case DataType::kUint16:
      FillIntegers<uint16_t>(tensor, generator, mask);
      break;
    case DataType::kInt32:
      FillIntegers<int32_t>(tensor, generator, mask);
      break;
    case DataType::kUint32:
      FillIntegers<uint32_t>(tensor, generator, mask);
      break;
    case DataType::kInt64:
      FillIntegers<int64_t>(tensor, generator, mask);
      break;
    case DataType::kUint64:
      FillIntegers<uint64_t>(tensor, generator, mask);
      break;
    default:
      return Unsupported(
          "input '" + input.name + "' is " + std::string(graph::DataTypeName(input.dtype)) +
          ", for which no random values are made; pass --input " + input.name + "=FILE.pb");
  }
  return tensor;
}

}  // namespace nxrt::cli
