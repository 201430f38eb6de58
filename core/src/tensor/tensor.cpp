#include "nxrt/tensor.hpp"

#include <algorithm>
#include <new>

#include "nxrt/graph/weight_store.hpp"

namespace nxrt {
namespace {

Result<size_t> DenseBytes(DataType dtype, std::span<const int64_t> shape) {
  NXRT_ASSIGN_OR_RETURN(const uint64_t count, graph::ElementCount(shape));
  if (dtype == DataType::kString) return size_t{0};
  NXRT_ASSIGN_OR_RETURN(const uint64_t bytes, graph::RawByteSize(dtype, count));
  return static_cast<size_t>(bytes);
}

}  // namespace

Result<Tensor> Tensor::Zeros(DataType dtype, std::vector<int64_t> shape) {
  if (dtype == DataType::kString || dtype == DataType::kUndefined) {
    return InvalidArgument("Tensor::Zeros needs a numeric dtype, got " +
                           std::string(graph::DataTypeName(dtype)) +
                           "; use Tensor::FromStrings for strings");
  }
  Tensor t;
  NXRT_RETURN_IF_ERROR(t.Reshape(dtype, shape));
  std::fill(t.owned_.begin(), t.owned_.end(), std::byte{0});
  return t;
}

Result<Tensor> Tensor::FromStrings(std::vector<int64_t> shape, std::vector<std::string> strings) {
  NXRT_ASSIGN_OR_RETURN(const uint64_t count, graph::ElementCount(shape));
  if (count != strings.size()) {
    return InvalidArgument("string tensor of " + std::to_string(count) + " elements given " +
                           std::to_string(strings.size()) + " strings");
  }
  Tensor t;
  t.dtype_ = DataType::kString;
  t.shape_ = std::move(shape);
  t.strings_ = std::move(strings);
  return t;
}

Tensor Tensor::Borrow(DataType dtype, std::vector<int64_t> shape, void* data, size_t byte_size,
                      MemoryKind memory) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.memory_ = memory;
  t.is_borrowed_ = true;
  t.borrowed_ = data;
  t.borrowed_size_ = byte_size;
  return t;
}

size_t Tensor::element_count() const {
  size_t count = 1;
  for (int64_t d : shape_) count *= static_cast<size_t>(d < 0 ? 0 : d);
  return count;
}

Status Tensor::Reshape(DataType dtype, std::span<const int64_t> shape) {
  NXRT_ASSIGN_OR_RETURN(const size_t bytes, DenseBytes(dtype, shape));
  NXRT_ASSIGN_OR_RETURN(const uint64_t count, graph::ElementCount(shape));
  if (is_borrowed_ && memory_ == MemoryKind::kHost && dtype != DataType::kString &&
      bytes == borrowed_size_) {
    dtype_ = dtype;
    shape_.assign(shape.begin(), shape.end());
    return Status::Ok();
  }
  // Storage first, so a tensor that cannot have it keeps what it was.
  try {
    if (dtype == DataType::kString) {
      strings_.resize(static_cast<size_t>(count));
      owned_.clear();
    } else {
      owned_.resize(bytes);
      strings_.clear();
    }
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kOutOfMemory,
                  "cannot allocate host memory for " + std::to_string(count) + " " +
                      std::string(graph::DataTypeName(dtype)) + " elements");
  }
  dtype_ = dtype;
  shape_.assign(shape.begin(), shape.end());
  memory_ = MemoryKind::kHost;
  is_borrowed_ = false;
  borrowed_ = nullptr;
  borrowed_size_ = 0;
  return Status::Ok();
}

}  // namespace nxrt
