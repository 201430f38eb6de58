#include "strided_copy.hpp"

#include <array>
#include <cstring>
#include <vector>

namespace nxrt::cpu {
namespace {

template <typename Word>
void CopyWords(const Dims& dims, const Dims& strides, const Word* src, Word* dst) {
  const size_t rank = dims.size();
  const int64_t inner = dims[rank - 1];
  const int64_t inner_stride = strides[rank - 1];
  const int64_t total = ElementCount(dims);
  // Outer-axis counters; on the stack for the ranks models use, so a
  // capture-safe kernel's compute allocates nothing.
  std::array<int64_t, 16> small_index{};
  std::vector<int64_t> large_index(rank > small_index.size() ? rank : 0, 0);
  int64_t* index = large_index.empty() ? small_index.data() : large_index.data();
  int64_t offset = 0;
  for (int64_t out = 0; out < total; out += inner) {
    const Word* row = src + offset;
    if (inner_stride == 1) {
      std::memcpy(dst + out, row, static_cast<size_t>(inner) * sizeof(Word));
    } else {
      for (int64_t i = 0; i < inner; ++i) dst[out + i] = row[i * inner_stride];
    }
    for (size_t axis = rank - 1; axis-- > 0;) {
      offset += strides[axis];
      if (++index[axis] < dims[axis]) break;
      offset -= strides[axis] * index[axis];
      index[axis] = 0;
    }
  }
}

struct Word16 {
  uint64_t low;
  uint64_t high;
};

}  // namespace

void StridedCopy(size_t element_size, const Dims& dims, const Dims& strides, const void* src,
                 int64_t offset, void* dst) {
  if (ElementCount(dims) == 0) return;
  if (dims.empty()) {
    std::memcpy(dst, static_cast<const std::byte*>(src) + offset * element_size, element_size);
    return;
  }
  switch (element_size) {
    case 1:
      CopyWords(dims, strides, static_cast<const uint8_t*>(src) + offset,
                static_cast<uint8_t*>(dst));
      break;
    case 2:
      CopyWords(dims, strides, static_cast<const uint16_t*>(src) + offset,
                static_cast<uint16_t*>(dst));
      break;
    case 4:
      CopyWords(dims, strides, static_cast<const uint32_t*>(src) + offset,
                static_cast<uint32_t*>(dst));
      break;
    case 8:
      CopyWords(dims, strides, static_cast<const uint64_t*>(src) + offset,
                static_cast<uint64_t*>(dst));
      break;
    case 16:
      CopyWords(dims, strides, static_cast<const Word16*>(src) + offset, static_cast<Word16*>(dst));
      break;
    default:
      FailUnsupported("element size " + std::to_string(element_size) + " not supported");
  }
}

}  // namespace nxrt::cpu
