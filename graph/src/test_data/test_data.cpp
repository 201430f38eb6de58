#include "nxrt/graph/test_data.hpp"

#include <onnx/onnx-data_pb.h>

#include <climits>
#include <cstring>
#include <exception>
#include <fstream>

#include "loader/tensor_proto_data.hpp"
#include "nxrt/graph/quoted_name.hpp"

namespace nxrt::graph {

namespace fs = std::filesystem;

TestProtoKind TestProtoKindFor(ValueKind kind) {
  switch (kind) {
    case ValueKind::kTensor:
      return TestProtoKind::kTensor;
    case ValueKind::kSequence:
      return TestProtoKind::kSequence;
    case ValueKind::kOptionalTensor:
    case ValueKind::kOptionalSequence:
      return TestProtoKind::kOptional;
    case ValueKind::kUnknown:
      break;
  }
  return TestProtoKind::kGuess;
}

namespace {

Result<TestTensor> DecodeTensor(const onnx::TensorProto& proto) {
  if (HasExternalData(proto)) {
    return Unsupported("tensor " + Quoted(proto.name()) +
                       " uses external data; inline it in the file");
  }
  TestTensor tensor;
  tensor.name = proto.name();
  NXRT_ASSIGN_OR_RETURN(tensor.dtype, TensorProtoDataType(proto));
  NXRT_ASSIGN_OR_RETURN(TensorExtent extent, TensorProtoExtent(proto));
  tensor.dims = std::move(extent.dims);
  if (tensor.dtype == DataType::kString) {
    NXRT_ASSIGN_OR_RETURN(tensor.strings, TensorProtoStrings(proto, extent.element_count));
  } else {
    NXRT_ASSIGN_OR_RETURN(tensor.bytes,
                          TensorProtoRawBytes(proto, tensor.dtype, extent.element_count));
  }
  return tensor;
}

Result<TestValue> FromTensor(const onnx::TensorProto& proto) {
  TestValue value;
  value.kind = TestValueKind::kTensor;
  NXRT_ASSIGN_OR_RETURN(value.tensor, DecodeTensor(proto));
  value.name = value.tensor.name;
  return value;
}

Result<TestValue> FromSequence(const onnx::SequenceProto& proto) {
  if (proto.elem_type() != onnx::SequenceProto::TENSOR &&
      proto.elem_type() != onnx::SequenceProto::UNDEFINED) {
    return Unsupported("sequence " + Quoted(proto.name()) + " holds elem_type " +
                       std::to_string(proto.elem_type()) + "; only sequences of tensors are read");
  }
  if (proto.sparse_tensor_values_size() > 0 || proto.sequence_values_size() > 0 ||
      proto.map_values_size() > 0 || proto.optional_values_size() > 0) {
    return Unsupported("sequence " + Quoted(proto.name()) + " holds non-tensor elements");
  }
  TestValue value;
  value.kind = TestValueKind::kSequence;
  value.name = proto.name();
  for (const auto& element : proto.tensor_values()) {
    NXRT_ASSIGN_OR_RETURN(TestTensor tensor, DecodeTensor(element));
    if (value.element_dtype == DataType::kUndefined) value.element_dtype = tensor.dtype;
    if (tensor.dtype != value.element_dtype) {
      return InvalidArgument("sequence " + Quoted(proto.name()) + " mixes element types " +
                             std::string(DataTypeName(value.element_dtype)) + " and " +
                             std::string(DataTypeName(tensor.dtype)));
    }
    value.sequence.push_back(std::move(tensor));
  }
  return value;
}

Result<TestValue> FromOptional(const onnx::OptionalProto& proto) {
  const bool has_value = proto.has_tensor_value() || proto.has_sequence_value() ||
                         proto.has_sparse_tensor_value() || proto.has_map_value() ||
                         proto.has_optional_value();
  if (!has_value) {
    TestValue absent;
    absent.kind = TestValueKind::kAbsentOptional;
    absent.name = proto.name();
    return absent;
  }
  Result<TestValue> inner = InvalidArgument("optional " + Quoted(proto.name()) +
                                            " holds a value of another kind than its elem_type " +
                                            std::to_string(proto.elem_type()));
  if (proto.elem_type() == onnx::OptionalProto::TENSOR && proto.has_tensor_value()) {
    inner = FromTensor(proto.tensor_value());
  } else if (proto.elem_type() == onnx::OptionalProto::SEQUENCE && proto.has_sequence_value()) {
    inner = FromSequence(proto.sequence_value());
  } else if (proto.elem_type() != onnx::OptionalProto::TENSOR &&
             proto.elem_type() != onnx::OptionalProto::SEQUENCE) {
    return Unsupported("optional " + Quoted(proto.name()) + " holds elem_type " +
                       std::to_string(proto.elem_type()) +
                       "; only optional tensors and sequences are read");
  }
  if (inner.ok()) inner->name = proto.name();
  return inner;
}

template <typename Message>
bool Parse(Message& message, std::span<const std::byte> bytes) {
  return message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

Result<TestValue> DecodeAs(std::span<const std::byte> bytes, TestProtoKind kind) {
  switch (kind) {
    case TestProtoKind::kTensor: {
      onnx::TensorProto proto;
      if (!Parse(proto, bytes)) {
        return InvalidArgument(
            "is not a valid TensorProto; write one with onnx.numpy_helper.from_array(...)"
            ".SerializeToString()");
      }
      return FromTensor(proto);
    }
    case TestProtoKind::kSequence: {
      onnx::SequenceProto proto;
      if (!Parse(proto, bytes)) {
        return InvalidArgument(
            "is not a valid SequenceProto; write one with onnx.numpy_helper.from_list(...)"
            ".SerializeToString()");
      }
      return FromSequence(proto);
    }
    case TestProtoKind::kOptional: {
      onnx::OptionalProto proto;
      if (!Parse(proto, bytes)) {
        return InvalidArgument(
            "is not a valid OptionalProto; write one with onnx.numpy_helper.from_optional(...)"
            ".SerializeToString()");
      }
      return FromOptional(proto);
    }
    case TestProtoKind::kGuess:
      break;
  }
  return InvalidArgument("no message kind to decode");
}

// Decodes `bytes`; `shown` is the file's name, already printable.
Result<TestValue> DecodeNamed(std::span<const std::byte> bytes, const std::string& shown,
                              TestProtoKind expected) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return Unsupported(shown + ": is larger than 2 GiB");
  }
  try {
    if (expected != TestProtoKind::kGuess) {
      Result<TestValue> value = DecodeAs(bytes, expected);
      if (!value.ok()) return value.status().WithContext(shown);
      return value;
    }
    // The three messages share field numbers, so a parse alone proves
    // little; a candidate counts only when its data agrees with its dims.
    std::string reasons;
    for (TestProtoKind kind :
         {TestProtoKind::kTensor, TestProtoKind::kSequence, TestProtoKind::kOptional}) {
      Result<TestValue> value = DecodeAs(bytes, kind);
      if (value.ok()) return value;
      reasons += (reasons.empty() ? "" : "; ") + value.status().message();
    }
    return InvalidArgument(
        shown + ": is no consistent TensorProto, SequenceProto or OptionalProto (" + reasons + ")");
  } catch (const std::exception& e) {
    return Internal(shown + ": decoding failed: " + e.what());
  }
}

}  // namespace

Result<TestValue> DecodeTestValue(std::span<const std::byte> bytes, const std::string& display_name,
                                  TestProtoKind expected) {
  return DecodeNamed(bytes, Printable(display_name), expected);
}

Result<TestValue> ReadTestValueFile(const fs::path& file, TestProtoKind expected) {
  const std::string shown = Printable(file.string());
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    return NotFound(shown + ": test data file does not exist");
  }
  std::ifstream in(file, std::ios::binary);
  const auto size = fs::file_size(file, ec);
  if (!in || ec) return Unavailable(shown + ": cannot be read; check permissions");
  if (size > static_cast<uintmax_t>(INT_MAX)) return Unsupported(shown + ": is larger than 2 GiB");
  try {
    std::vector<std::byte> bytes(size);
    if (size > 0 &&
        !in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size))) {
      return Unavailable(shown + ": read failed");
    }
    return DecodeNamed(bytes, shown, expected);
  } catch (const std::exception& e) {
    return Internal(shown + ": reading failed: " + e.what());
  }
}

Result<std::vector<std::byte>> EncodeTensorProto(const TestTensor& tensor) {
  const std::string what = "tensor " + Quoted(tensor.name);
  Result<uint64_t> count = ElementCount(tensor.dims);
  if (!count.ok()) return count.status().WithContext(what);
  if (tensor.dtype == DataType::kString) {
    if (tensor.strings.size() != *count) {
      return InvalidArgument(what + ": " + std::to_string(*count) + " string elements expected, " +
                             std::to_string(tensor.strings.size()) + " given");
    }
  } else {
    Status size = CheckRawSize(tensor.dtype, *count, tensor.bytes.size());
    if (!size.ok()) return size.WithContext(what);
  }
  try {
    onnx::TensorProto proto;
    proto.set_name(tensor.name);
    proto.set_data_type(static_cast<int32_t>(tensor.dtype));
    for (int64_t d : tensor.dims) proto.add_dims(d);
    if (tensor.dtype == DataType::kString) {
      for (const std::string& s : tensor.strings) proto.add_string_data(s);
    } else {
      proto.set_raw_data(reinterpret_cast<const char*>(tensor.bytes.data()), tensor.bytes.size());
    }
    const size_t size = proto.ByteSizeLong();
    if (size > static_cast<size_t>(INT_MAX)) {
      return Unsupported(what + ": a TensorProto cannot exceed 2 GiB");
    }
    std::vector<std::byte> out(size);
    if (!proto.SerializeToArray(out.data(), static_cast<int>(out.size()))) {
      return Internal(what + ": serialization failed");
    }
    return out;
  } catch (const std::exception& e) {
    return Internal(what + ": serialization failed: " + e.what());
  }
}

Status WriteTensorProtoFile(const fs::path& file, const TestTensor& tensor) {
  Result<std::vector<std::byte>> bytes = EncodeTensorProto(tensor);
  const std::string shown = Printable(file.string());
  if (!bytes.ok()) return bytes.status().WithContext(shown);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) return Unavailable(shown + ": cannot be opened for writing");
  out.write(reinterpret_cast<const char*>(bytes->data()),
            static_cast<std::streamsize>(bytes->size()));
  if (!out) return Unavailable(shown + ": write failed");
  return Status::Ok();
}

}  // namespace nxrt::graph
