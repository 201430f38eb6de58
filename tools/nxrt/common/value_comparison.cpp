#include "common/value_comparison.hpp"

#include <cmath>
#include <cstring>

#include "common/element_values.hpp"
#include "common/tensor_summary.hpp"
#include "nxrt/graph/dtype.hpp"

namespace nxrt::cli {
namespace {

bool Close(double actual, double expected, const Tolerance& tolerance) {
  if (std::isnan(actual) || std::isnan(expected)) return std::isnan(actual) && std::isnan(expected);
  if (std::isinf(expected) || std::isinf(actual)) return actual == expected;
  return std::abs(actual - expected) <= tolerance.atol + tolerance.rtol * std::abs(expected);
}

// Complex tensors interleave two scalars per element.
std::string ElementName(DataType dtype, size_t scalar_index) {
  if (dtype == DataType::kComplex64 || dtype == DataType::kComplex128) {
    return "element " + std::to_string(scalar_index / 2) +
           (scalar_index % 2 ? " (imaginary part)" : " (real part)");
  }
  return "element " + std::to_string(scalar_index);
}

std::string CompareStrings(const Tensor& actual, const graph::TestTensor& expected) {
  for (size_t i = 0; i < expected.strings.size(); ++i) {
    if (i >= actual.strings().size()) return "element " + std::to_string(i) + " is missing";
    if (actual.strings()[i] != expected.strings[i]) {
      return "element " + std::to_string(i) + " is " + JsonQuote(actual.strings()[i]) +
             ", expected " + JsonQuote(expected.strings[i]);
    }
  }
  return "";
}

std::string CompareNumbers(const Tensor& actual, const graph::TestTensor& expected,
                           const Tolerance& tolerance) {
  const DataType dtype = expected.dtype;
  if (actual.byte_size() != expected.bytes.size()) {
    return "holds " + std::to_string(actual.byte_size()) + " bytes, expected " +
           std::to_string(expected.bytes.size());
  }
  const size_t scalars = ScalarCount(dtype, expected.bytes.size());
  if (scalars == 0) {
    // float8 and packed 4-/2-bit types: compared byte for byte.
    const auto* bytes = static_cast<const std::byte*>(actual.data());
    for (size_t i = 0; i < expected.bytes.size(); ++i) {
      if (bytes[i] != expected.bytes[i]) {
        return "byte " + std::to_string(i) + " is " +
               std::to_string(std::to_integer<int>(bytes[i])) + ", expected " +
               std::to_string(std::to_integer<int>(expected.bytes[i]));
      }
    }
    return "";
  }
  const bool tolerant = IsFloatingPoint(dtype);
  for (size_t i = 0; i < scalars; ++i) {
    bool equal;
    if (tolerant) {
      equal = Close(ReadScalar(dtype, actual.data(), i),
                    ReadScalar(dtype, expected.bytes.data(), i), tolerance);
    } else {
      const size_t width = expected.bytes.size() / scalars;
      equal = std::memcmp(static_cast<const std::byte*>(actual.data()) + i * width,
                          expected.bytes.data() + i * width, width) == 0;
    }
    if (!equal) {
      return ElementName(dtype, i) + " is " + FormatScalar(dtype, actual.data(), i) +
             ", expected " + FormatScalar(dtype, expected.bytes.data(), i);
    }
  }
  return "";
}

const char* KindName(Value::Kind kind) {
  switch (kind) {
    case Value::Kind::kNone:
      return "an absent optional";
    case Value::Kind::kTensor:
      return "a tensor";
    case Value::Kind::kSequence:
      return "a sequence";
  }
  return "unknown";
}

const char* KindName(graph::TestValueKind kind) {
  switch (kind) {
    case graph::TestValueKind::kAbsentOptional:
      return KindName(Value::Kind::kNone);
    case graph::TestValueKind::kTensor:
      return KindName(Value::Kind::kTensor);
    case graph::TestValueKind::kSequence:
      return KindName(Value::Kind::kSequence);
  }
  return "unknown";
}

Value::Kind ExpectedKind(graph::TestValueKind kind) {
  switch (kind) {
    case graph::TestValueKind::kAbsentOptional:
      return Value::Kind::kNone;
    case graph::TestValueKind::kSequence:
      return Value::Kind::kSequence;
    case graph::TestValueKind::kTensor:
      break;
  }
  return Value::Kind::kTensor;
}

}  // namespace

std::string CompareTensor(const Tensor& actual, const graph::TestTensor& expected,
                          const Tolerance& tolerance) {
  if (actual.dtype() != expected.dtype) {
    return "dtype " + std::string(graph::DataTypeName(actual.dtype())) + ", expected " +
           std::string(graph::DataTypeName(expected.dtype));
  }
  if (actual.shape() != expected.dims) {
    return "shape " + ShapeText(actual.shape()) + ", expected " + ShapeText(expected.dims);
  }
  if (expected.dtype == DataType::kString) return CompareStrings(actual, expected);
  return CompareNumbers(actual, expected, tolerance);
}

std::string CompareValue(const Value& actual, const graph::TestValue& expected,
                         const Tolerance& tolerance) {
  if (actual.kind() != ExpectedKind(expected.kind)) {
    return std::string("is ") + KindName(actual.kind()) + ", expected " + KindName(expected.kind);
  }
  switch (actual.kind()) {
    case Value::Kind::kNone:
      return "";
    case Value::Kind::kTensor:
      return CompareTensor(actual.tensor(), expected.tensor, tolerance);
    case Value::Kind::kSequence:
      break;
  }
  const std::vector<Tensor>& elements = actual.sequence();
  if (elements.size() != expected.sequence.size()) {
    return "sequence of " + std::to_string(elements.size()) + " tensors, expected " +
           std::to_string(expected.sequence.size());
  }
  for (size_t i = 0; i < elements.size(); ++i) {
    const std::string why = CompareTensor(elements[i], expected.sequence[i], tolerance);
    if (!why.empty()) return "sequence element " + std::to_string(i) + ": " + why;
  }
  return "";
}

}  // namespace nxrt::cli
