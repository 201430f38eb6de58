// Reading the data of an ONNX TensorProto. ONNX lets a tensor carry its
// elements in raw_data or in one of several typed fields (float_data,
// int32_data holding 8- and 16-bit patterns, ...); the loader and the test
// data reader both need them in one form: the raw little-endian layout the
// weight store holds, or a list of strings.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nxrt/graph/dtype.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt::graph {

// Where a tensor's external data lives, from its external_data entries.
struct ExternalDataLocation {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;  // -1: to the end of the file
};

// The dtype of `tensor`; an error naming the number for one nxrt does not know.
Result<DataType> TensorProtoDataType(const onnx::TensorProto& tensor);

// The dims of `tensor` and their element count; an error for a negative dim
// or a count that overflows.
struct TensorExtent {
  std::vector<int64_t> dims;
  uint64_t element_count = 0;
};
Result<TensorExtent> TensorProtoExtent(const onnx::TensorProto& tensor);

bool HasExternalData(const onnx::TensorProto& tensor);
Result<ExternalDataLocation> TensorProtoExternalData(const onnx::TensorProto& tensor);

// The elements of an inline, non-string tensor in raw layout. The byte count
// must match `element_count` elements of `dtype`.
Result<std::vector<std::byte>> TensorProtoRawBytes(const onnx::TensorProto& tensor, DataType dtype,
                                                   uint64_t element_count);

// The elements of a string tensor; their number must be `element_count`.
Result<std::vector<std::string>> TensorProtoStrings(const onnx::TensorProto& tensor,
                                                    uint64_t element_count);

// Checks that `actual` bytes hold exactly `element_count` elements of `dtype`.
Status CheckRawSize(DataType dtype, uint64_t element_count, uint64_t actual);

}  // namespace nxrt::graph
