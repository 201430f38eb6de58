#include "strided_copy.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace nxrt::cpu {
namespace {

// Ranks past this (no model has them) are refused rather than walked on the heap.
constexpr size_t kMaxRank = 64;

// A view with its axes of extent 1 dropped and each pair of neighbours that
// walk memory as one axis merged: the same elements in the same order,
// walked in the fewest and longest rows (a Transpose of [1, 512, 256, 1]
// is a 2-D transpose, not 131,072 rows of one element).
struct CanonicalView {
  size_t rank = 0;
  std::array<int64_t, kMaxRank> dims{};
  std::array<int64_t, kMaxRank> strides{};
};

CanonicalView Canonical(const Dims& dims, const Dims& strides) {
  CanonicalView v;
  for (size_t a = 0; a < dims.size(); ++a) {
    if (dims[a] == 1) continue;
    if (v.rank > 0 && v.strides[v.rank - 1] == strides[a] * dims[a]) {
      v.dims[v.rank - 1] *= dims[a];
      v.strides[v.rank - 1] = strides[a];
      continue;
    }
    v.dims[v.rank] = dims[a];
    v.strides[v.rank] = strides[a];
    ++v.rank;
  }
  if (v.rank == 0) {
    v.rank = 1;
    v.dims[0] = 1;
    v.strides[0] = 1;
  }
  return v;
}

// The last two axes of `v` in square tiles, so that both the rows read and
// the rows written stay in cache: for a view whose last axis reads across
// rows and whose one before reads along them (a transpose).
template <typename Word>
void CopyTiles(const CanonicalView& v, size_t outer_axes, const Word* src, int64_t offset,
               Word* dst) {
  constexpr int64_t kTile = 16;
  const int64_t rows = v.dims[outer_axes], cols = v.dims[outer_axes + 1];
  const int64_t row_stride = v.strides[outer_axes], col_stride = v.strides[outer_axes + 1];
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    const int64_t r1 = std::min(rows, r0 + kTile);
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t c1 = std::min(cols, c0 + kTile);
      for (int64_t r = r0; r < r1; ++r) {
        const Word* in = src + offset + r * row_stride;
        Word* out = dst + r * cols;
        for (int64_t c = c0; c < c1; ++c) out[c] = in[c * col_stride];
      }
    }
  }
}

template <typename Word>
void CopyWords(const CanonicalView& v, const Word* src, Word* dst) {
  const size_t rank = v.rank;
  const bool tiled = rank >= 2 && v.strides[rank - 1] != 1 && v.strides[rank - 2] == 1;
  // The axes walked one position at a time; the rest are one row, or one
  // tiled plane.
  const size_t outer_axes = tiled ? rank - 2 : rank - 1;
  const int64_t block = tiled ? v.dims[rank - 2] * v.dims[rank - 1] : v.dims[rank - 1];
  const int64_t inner_stride = v.strides[rank - 1];
  int64_t total = 1;
  for (size_t a = 0; a < rank; ++a) total *= v.dims[a];
  std::array<int64_t, kMaxRank> index{};
  int64_t offset = 0;
  for (int64_t out = 0; out < total; out += block) {
    if (tiled) {
      CopyTiles(v, outer_axes, src, offset, dst + out);
    } else if (inner_stride == 1) {
      std::memcpy(dst + out, src + offset, static_cast<size_t>(block) * sizeof(Word));
    } else {
      const Word* row = src + offset;
      for (int64_t i = 0; i < block; ++i) dst[out + i] = row[i * inner_stride];
    }
    for (size_t axis = outer_axes; axis-- > 0;) {
      offset += v.strides[axis];
      if (++index[axis] < v.dims[axis]) break;
      offset -= v.strides[axis] * index[axis];
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
  if (dims.size() > kMaxRank) {
    FailUnsupported("a view of rank " + std::to_string(dims.size()) + " (at most " +
                    std::to_string(kMaxRank) + " are copied)");
  }
  const CanonicalView view = Canonical(dims, strides);
  switch (element_size) {
    case 1:
      CopyWords(view, static_cast<const uint8_t*>(src) + offset, static_cast<uint8_t*>(dst));
      break;
    case 2:
      CopyWords(view, static_cast<const uint16_t*>(src) + offset, static_cast<uint16_t*>(dst));
      break;
    case 4:
      CopyWords(view, static_cast<const uint32_t*>(src) + offset, static_cast<uint32_t*>(dst));
      break;
    case 8:
      CopyWords(view, static_cast<const uint64_t*>(src) + offset, static_cast<uint64_t*>(dst));
      break;
    case 16:
      CopyWords(view, static_cast<const Word16*>(src) + offset, static_cast<Word16*>(dst));
      break;
    default:
      FailUnsupported("element size " + std::to_string(element_size) + " not supported");
  }
}

}  // namespace nxrt::cpu
