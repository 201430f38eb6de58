#include "loader/tensor_proto_data.hpp"

#include <bit>
#include <charconv>
#include <cstring>

#include "nxrt/graph/quoted_name.hpp"
#include "nxrt/graph/weight_store.hpp"

namespace nxrt::graph {

// Typed fields are copied from host memory into ONNX's little-endian layout.
static_assert(std::endian::native == std::endian::little, "nxrt assumes a little-endian host");

Result<DataType> TensorProtoDataType(const onnx::TensorProto& tensor) {
  std::optional<DataType> dtype = DataTypeFromOnnx(tensor.data_type());
  if (!dtype || *dtype == DataType::kUndefined) {
    return Unsupported("unknown tensor data_type " + std::to_string(tensor.data_type()) +
                       "; re-export the model with a standard ONNX element type");
  }
  return *dtype;
}

Result<TensorExtent> TensorProtoExtent(const onnx::TensorProto& tensor) {
  TensorExtent extent;
  extent.dims.assign(tensor.dims().begin(), tensor.dims().end());
  Result<uint64_t> count = ElementCount(extent.dims);
  if (!count.ok()) return InvalidArgument("bad dims: " + count.status().message());
  extent.element_count = *count;
  return extent;
}

bool HasExternalData(const onnx::TensorProto& tensor) {
  return tensor.has_data_location() &&
         tensor.data_location() == onnx::TensorProto_DataLocation_EXTERNAL;
}

namespace {

Result<int64_t> ParseExternalNumber(const std::string& key, const std::string& text) {
  int64_t number = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, number);
  if (ec != std::errc() || ptr != end || number < 0) {
    return InvalidArgument("external data " + key + " " + Quoted(text) +
                           " is not a non-negative integer");
  }
  return number;
}

// The low `width` bytes of each value, little-endian.
template <typename Field>
std::vector<std::byte> Narrow(const Field& values, size_t width) {
  std::vector<std::byte> out(values.size() * width);
  for (int i = 0; i < values.size(); ++i) {
    const auto v = static_cast<uint64_t>(values.Get(i));
    for (size_t b = 0; b < width; ++b) {
      out[static_cast<size_t>(i) * width + b] = static_cast<std::byte>((v >> (8 * b)) & 0xFF);
    }
  }
  return out;
}

template <typename Field>
std::vector<std::byte> CopyAsBytes(const Field& values) {
  std::vector<std::byte> out(values.size() * sizeof(values.Get(0)));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// Number of entries a typed field must hold for `count` elements of `dtype`:
// complex numbers take two, packed sub-byte types one per byte.
uint64_t TypedEntriesFor(DataType dtype, uint64_t count) {
  switch (dtype) {
    case DataType::kComplex64:
    case DataType::kComplex128:
      return count * 2;
    case DataType::kUint4:
    case DataType::kInt4:
    case DataType::kFloat4E2M1:
      return (count + 1) / 2;
    case DataType::kUint2:
    case DataType::kInt2:
      return (count + 3) / 4;
    default:
      return count;
  }
}

// The raw bytes of the typed field that ONNX assigns to `dtype`, and how many
// entries that field held.
Result<std::pair<std::vector<std::byte>, uint64_t>> TypedFieldBytes(const onnx::TensorProto& tensor,
                                                                    DataType dtype) {
  auto pack = [](std::vector<std::byte> bytes, int entries) {
    return std::make_pair(std::move(bytes), static_cast<uint64_t>(entries));
  };
  switch (dtype) {
    case DataType::kFloat32:
    case DataType::kComplex64:
      return pack(CopyAsBytes(tensor.float_data()), tensor.float_data_size());
    case DataType::kFloat64:
    case DataType::kComplex128:
      return pack(CopyAsBytes(tensor.double_data()), tensor.double_data_size());
    case DataType::kInt64:
      return pack(CopyAsBytes(tensor.int64_data()), tensor.int64_data_size());
    case DataType::kUint64:
      return pack(CopyAsBytes(tensor.uint64_data()), tensor.uint64_data_size());
    case DataType::kUint32:
      return pack(Narrow(tensor.uint64_data(), 4), tensor.uint64_data_size());
    case DataType::kInt32:
      return pack(CopyAsBytes(tensor.int32_data()), tensor.int32_data_size());
    case DataType::kInt16:
    case DataType::kUint16:
    case DataType::kFloat16:
    case DataType::kBfloat16:
      return pack(Narrow(tensor.int32_data(), 2), tensor.int32_data_size());
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kBool:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0:
    case DataType::kUint4:
    case DataType::kInt4:
    case DataType::kFloat4E2M1:
    case DataType::kUint2:
    case DataType::kInt2:
      return pack(Narrow(tensor.int32_data(), 1), tensor.int32_data_size());
    case DataType::kString:
    case DataType::kUndefined:
      break;
  }
  return Unsupported("no typed field holds dtype " + std::string(DataTypeName(dtype)));
}

}  // namespace

Result<ExternalDataLocation> TensorProtoExternalData(const onnx::TensorProto& tensor) {
  ExternalDataLocation where;
  bool has_location = false;
  for (const onnx::StringStringEntryProto& entry : tensor.external_data()) {
    if (entry.key() == "location") {
      where.location = entry.value();
      has_location = true;
    } else if (entry.key() == "offset") {
      NXRT_ASSIGN_OR_RETURN(where.offset, ParseExternalNumber("offset", entry.value()));
    } else if (entry.key() == "length") {
      NXRT_ASSIGN_OR_RETURN(where.length, ParseExternalNumber("length", entry.value()));
    }
  }
  if (!has_location) return InvalidArgument("external data has no 'location' entry");
  return where;
}

Status CheckRawSize(DataType dtype, uint64_t element_count, uint64_t actual) {
  Result<uint64_t> expected = RawByteSize(dtype, element_count);
  if (!expected.ok()) return expected.status();
  if (*expected != actual) {
    return InvalidArgument(std::to_string(element_count) + " elements of " +
                           std::string(DataTypeName(dtype)) + " need " + std::to_string(*expected) +
                           " bytes but the data holds " + std::to_string(actual));
  }
  return Status::Ok();
}

Result<std::vector<std::byte>> TensorProtoRawBytes(const onnx::TensorProto& tensor, DataType dtype,
                                                   uint64_t element_count) {
  if (tensor.has_segment()) {
    return Unsupported("segmented tensors are not supported; save the tensor whole");
  }
  if (tensor.has_raw_data()) {
    const std::string& raw = tensor.raw_data();
    NXRT_RETURN_IF_ERROR(CheckRawSize(dtype, element_count, raw.size()));
    std::vector<std::byte> bytes(raw.size());
    if (!raw.empty()) std::memcpy(bytes.data(), raw.data(), raw.size());
    return bytes;
  }
  NXRT_ASSIGN_OR_RETURN(auto typed, TypedFieldBytes(tensor, dtype));
  const uint64_t wanted = TypedEntriesFor(dtype, element_count);
  if (typed.second != wanted) {
    return InvalidArgument(std::to_string(element_count) + " elements of " +
                           std::string(DataTypeName(dtype)) + " need " + std::to_string(wanted) +
                           " typed-field entries but the tensor holds " +
                           std::to_string(typed.second));
  }
  return std::move(typed.first);
}

Result<std::vector<std::string>> TensorProtoStrings(const onnx::TensorProto& tensor,
                                                    uint64_t element_count) {
  if (tensor.has_segment()) {
    return Unsupported("segmented tensors are not supported; save the tensor whole");
  }
  if (static_cast<uint64_t>(tensor.string_data_size()) != element_count) {
    return InvalidArgument(
        "its dims claim " + std::to_string(element_count) + " strings but string_data holds " +
        std::to_string(tensor.string_data_size()) + "; make the dims match the strings");
  }
  return std::vector<std::string>(tensor.string_data().begin(), tensor.string_data().end());
}

}  // namespace nxrt::graph
