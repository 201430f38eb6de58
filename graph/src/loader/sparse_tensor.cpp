#include "loader/sparse_tensor.hpp"

#include <cstdint>
#include <cstring>
#include <optional>

#include "loader/tensor_proto_data.hpp"
#include "nxrt/graph/weight_store.hpp"
#include "nxrt/support/checked_math.hpp"
#include "nxrt/support/physical_memory.hpp"

namespace nxrt::graph {

namespace {

// The linear position of each listed element, from indices of shape [NNZ]
// (already linear) or [NNZ, rank] (coordinates).
Result<std::vector<uint64_t>> LinearPositions(const onnx::TensorProto& indices,
                                              const std::vector<int64_t>& dims, uint64_t nnz,
                                              uint64_t dense_count) {
  NXRT_ASSIGN_OR_RETURN(DataType index_type, TensorProtoDataType(indices));
  if (index_type != DataType::kInt64) return InvalidArgument("sparse indices must be int64");
  NXRT_ASSIGN_OR_RETURN(TensorExtent extent, TensorProtoExtent(indices));
  NXRT_ASSIGN_OR_RETURN(std::vector<std::byte> bytes,
                        TensorProtoRawBytes(indices, index_type, extent.element_count));
  std::vector<int64_t> raw(extent.element_count);
  if (!bytes.empty()) std::memcpy(raw.data(), bytes.data(), bytes.size());

  std::vector<uint64_t> positions;
  positions.reserve(nnz);
  const bool linear = extent.dims.size() == 1 && static_cast<uint64_t>(extent.dims[0]) == nnz;
  const bool coordinates = extent.dims.size() == 2 &&
                           static_cast<uint64_t>(extent.dims[0]) == nnz &&
                           static_cast<size_t>(extent.dims[1]) == dims.size();
  if (!linear && !coordinates) {
    return InvalidArgument("sparse indices must have shape [NNZ] or [NNZ, rank]");
  }
  for (uint64_t k = 0; k < nnz; ++k) {
    uint64_t position = 0;
    if (linear) {
      if (raw[k] < 0) return InvalidArgument("negative sparse index");
      position = static_cast<uint64_t>(raw[k]);
    } else {
      for (size_t axis = 0; axis < dims.size(); ++axis) {
        const int64_t coordinate = raw[k * dims.size() + axis];
        if (coordinate < 0 || coordinate >= dims[axis]) {
          return InvalidArgument("sparse coordinate " + std::to_string(coordinate) +
                                 " is outside axis " + std::to_string(axis));
        }
        position = position * static_cast<uint64_t>(dims[axis]) + static_cast<uint64_t>(coordinate);
      }
    }
    if (position >= dense_count) {
      return InvalidArgument("sparse index " + std::to_string(position) +
                             " is beyond the dense tensor");
    }
    positions.push_back(position);
  }
  return positions;
}

// Refuses a dense form larger than the machine's memory: a few bytes of
// sparse tensor may claim any dims, and filling terabytes of zeros or empty
// strings would end the process instead of failing the load.
Status CheckDenseSizeFits(DataType dtype, uint64_t dense_count) {
  uint64_t bytes = 0;
  if (dtype == DataType::kString) {
    const std::optional<uint64_t> total = CheckedMul<uint64_t>(dense_count, sizeof(std::string));
    bytes = total.value_or(UINT64_MAX);
  } else {
    NXRT_ASSIGN_OR_RETURN(bytes, RawByteSize(dtype, dense_count));
  }
  const uint64_t memory = PhysicalMemoryBytes();
  if (bytes <= memory) return Status::Ok();
  return InvalidArgument("its " + std::to_string(dense_count) + " dense elements of " +
                         std::string(DataTypeName(dtype)) + " take more than the " +
                         std::to_string(memory) +
                         " bytes of this machine's memory; check its dims");
}

}  // namespace

Result<onnx::TensorProto> DensifySparseTensor(const onnx::SparseTensorProto& sparse) {
  const onnx::TensorProto& values = sparse.values();
  NXRT_ASSIGN_OR_RETURN(DataType dtype, TensorProtoDataType(values));
  std::vector<int64_t> dims(sparse.dims().begin(), sparse.dims().end());
  NXRT_ASSIGN_OR_RETURN(uint64_t dense_count, ElementCount(dims));
  NXRT_RETURN_IF_ERROR(CheckDenseSizeFits(dtype, dense_count));
  NXRT_ASSIGN_OR_RETURN(TensorExtent value_extent, TensorProtoExtent(values));
  const uint64_t nnz = value_extent.element_count;
  NXRT_ASSIGN_OR_RETURN(std::vector<uint64_t> positions,
                        LinearPositions(sparse.indices(), dims, nnz, dense_count));

  onnx::TensorProto dense;
  dense.set_name(values.name());
  dense.set_data_type(values.data_type());
  for (int64_t d : dims) dense.add_dims(d);
  if (dtype == DataType::kString) {
    NXRT_ASSIGN_OR_RETURN(std::vector<std::string> strings, TensorProtoStrings(values, nnz));
    std::vector<std::string> all(dense_count);
    for (uint64_t k = 0; k < nnz; ++k) all[positions[k]] = std::move(strings[k]);
    for (std::string& s : all) dense.add_string_data(std::move(s));
    return dense;
  }
  if (DataTypeBits(dtype) % 8 != 0) {
    return Unsupported("sparse tensors of packed dtype " + std::string(DataTypeName(dtype)) +
                       " are not supported; store the tensor dense");
  }
  const size_t width = DataTypeBits(dtype) / 8;
  NXRT_ASSIGN_OR_RETURN(std::vector<std::byte> listed, TensorProtoRawBytes(values, dtype, nnz));
  NXRT_ASSIGN_OR_RETURN(uint64_t dense_bytes, RawByteSize(dtype, dense_count));
  std::string raw(dense_bytes, '\0');
  for (uint64_t k = 0; k < nnz; ++k) {
    std::memcpy(raw.data() + positions[k] * width, listed.data() + k * width, width);
  }
  dense.set_raw_data(std::move(raw));
  return dense;
}

}  // namespace nxrt::graph
