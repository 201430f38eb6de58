#include "nxrt/graph/dtype.hpp"

namespace nxrt::graph {

std::optional<DataType> DataTypeFromOnnx(int32_t onnx_type) {
  if (onnx_type < 0 || onnx_type > static_cast<int32_t>(DataType::kInt2)) return std::nullopt;
  return static_cast<DataType>(onnx_type);
}

std::string_view DataTypeName(DataType type) {
  switch (type) {
    case DataType::kUndefined:
      return "undefined";
    case DataType::kFloat32:
      return "float";
    case DataType::kUint8:
      return "uint8";
    case DataType::kInt8:
      return "int8";
    case DataType::kUint16:
      return "uint16";
    case DataType::kInt16:
      return "int16";
    case DataType::kInt32:
      return "int32";
    case DataType::kInt64:
      return "int64";
    case DataType::kString:
      return "string";
    case DataType::kBool:
      return "bool";
    case DataType::kFloat16:
      return "float16";
    case DataType::kFloat64:
      return "double";
    case DataType::kUint32:
      return "uint32";
    case DataType::kUint64:
      return "uint64";
    case DataType::kComplex64:
      return "complex64";
    case DataType::kComplex128:
      return "complex128";
    case DataType::kBfloat16:
      return "bfloat16";
    case DataType::kFloat8E4M3FN:
      return "float8e4m3fn";
    case DataType::kFloat8E4M3FNUZ:
      return "float8e4m3fnuz";
    case DataType::kFloat8E5M2:
      return "float8e5m2";
    case DataType::kFloat8E5M2FNUZ:
      return "float8e5m2fnuz";
    case DataType::kUint4:
      return "uint4";
    case DataType::kInt4:
      return "int4";
    case DataType::kFloat4E2M1:
      return "float4e2m1";
    case DataType::kFloat8E8M0:
      return "float8e8m0";
    case DataType::kUint2:
      return "uint2";
    case DataType::kInt2:
      return "int2";
  }
  return "unknown";
}

size_t DataTypeBits(DataType type) {
  switch (type) {
    case DataType::kUndefined:
    case DataType::kString:
      return 0;
    case DataType::kBool:
    case DataType::kUint8:
    case DataType::kInt8:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0:
      return 8;
    case DataType::kUint16:
    case DataType::kInt16:
    case DataType::kFloat16:
    case DataType::kBfloat16:
      return 16;
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kFloat32:
      return 32;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kFloat64:
    case DataType::kComplex64:
      return 64;
    case DataType::kComplex128:
      return 128;
    case DataType::kUint4:
    case DataType::kInt4:
    case DataType::kFloat4E2M1:
      return 4;
    case DataType::kUint2:
    case DataType::kInt2:
      return 2;
  }
  return 0;
}

}  // namespace nxrt::graph
