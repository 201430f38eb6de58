#include "ops/two_pass_max_pool.hpp"

#include <xmmintrin.h>

#include <algorithm>
#include <type_traits>

namespace nxrt::cpu {
namespace {

// The 2x2 pool's pairs, which GCC leaves scalar: four at a time from two
// loads split into even and odd lanes.
void MaxOfPairs(const float* __restrict row, float* __restrict out, int64_t count) {
  int64_t ow = 0;
  for (; ow + 4 <= count; ow += 4) {
    const __m128 a = _mm_loadu_ps(row + 2 * ow);
    const __m128 b = _mm_loadu_ps(row + 2 * ow + 4);
    const __m128 even = _mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    const __m128 odd = _mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    _mm_storeu_ps(out + ow, _mm_max_ps(odd, even));  // odd > even ? odd : even
  }
  for (; ow < count; ++ow) out[ow] = row[2 * ow + 1] > row[2 * ow] ? row[2 * ow + 1] : row[2 * ow];
}

// The 3-wide stride-2 windows of CNN stems, also left scalar by GCC: window
// j is the even lanes j and j + 1 and the odd lane j of two even/odd splits.
void MaxOfStridedTriples(const float* __restrict row, float* __restrict out, int64_t count) {
  int64_t ow = 0;
  // The second split reads one column past window ow + 3's: inside the row
  // while a window ow + 4 follows.
  for (; ow + 5 <= count; ow += 4) {
    const float* at = row + 2 * ow;
    const __m128 a = _mm_loadu_ps(at), b = _mm_loadu_ps(at + 4);
    const __m128 c = _mm_loadu_ps(at + 2), d = _mm_loadu_ps(at + 6);
    const __m128 even = _mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    const __m128 odd = _mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    const __m128 next_even = _mm_shuffle_ps(c, d, _MM_SHUFFLE(2, 0, 2, 0));
    _mm_storeu_ps(out + ow, _mm_max_ps(_mm_max_ps(odd, even), next_even));
  }
  for (; ow < count; ++ow) {
    const float* window = row + 2 * ow;
    const float m = window[1] > window[0] ? window[1] : window[0];
    out[ow] = window[2] > m ? window[2] : m;
  }
}

// The common widths and strides as constants, so the compiler vectorises
// their strided reads.
template <typename T, int kWidth, int kStride>
void MaxOfFixedColumns(const T* __restrict row, T* __restrict out, int64_t count) {
  for (int64_t ow = 0; ow < count; ++ow) {
    const T* window = row + ow * kStride;
    T m = window[0];
    for (int kw = 1; kw < kWidth; ++kw) m = window[kw] > m ? window[kw] : m;
    out[ow] = m;
  }
}

// Whether every window along `axis` reaches the image: the first and the
// last do.
bool Reaches(const WindowGeometry& g, size_t axis) {
  const auto inside = [&](int64_t o) {
    return OffsetsWithin(o * g.strides[axis] - g.pad_begin[axis], 1, g.kernel[axis], 0, g.in[axis])
               .count() > 0;
  };
  return g.out[axis] > 0 && g.dilations[axis] == 1 && inside(0) && inside(g.out[axis] - 1);
}

}  // namespace

std::optional<TwoPassMaxPool> TwoPassMaxPool::Plan(const WindowGeometry& g, int64_t planes) {
  if (g.in.size() != 2 || !Reaches(g, 0) || !Reaches(g, 1)) return std::nullopt;
  return TwoPassMaxPool(g, planes);
}

TwoPassMaxPool::TwoPassMaxPool(const WindowGeometry& g, int64_t planes)
    : geometry_(g), planes_(planes) {
  const int64_t in_w = g.in[1], out_w = g.out[1];
  tiled_ = g.pad_begin[1] == 0 && g.kernel[1] == g.strides[1] && in_w == out_w * g.strides[1];
  const int64_t first = (g.pad_begin[1] + g.strides[1] - 1) / g.strides[1];
  const int64_t last = in_w + g.pad_begin[1] >= g.kernel[1]
                           ? (in_w + g.pad_begin[1] - g.kernel[1]) / g.strides[1] + 1
                           : 0;
  inner_columns_.first = std::min(first, out_w);
  inner_columns_.last = std::clamp(last, inner_columns_.first, out_w);
  for (int64_t ow = 0; ow < out_w; ++ow) {
    if (ow >= inner_columns_.first && ow < inner_columns_.last) continue;
    edge_taps_.push_back(
        OffsetsWithin(ow * g.strides[1] - g.pad_begin[1], 1, g.kernel[1], 0, in_w));
  }
  columns_.assign(static_cast<size_t>(g.in[0] * out_w), 0.0f);
}

template <typename T>
void TwoPassMaxPool::Run(const T* x, T* y) {
  const WindowGeometry& g = geometry_;
  const int64_t in_h = g.in[0], in_w = g.in[1];
  const int64_t out_h = g.out[0], out_w = g.out[1];
  T* columns = reinterpret_cast<T*>(columns_.data());
  for (int64_t plane = 0; plane < planes_; ++plane) {
    const T* image = x + plane * in_h * in_w;
    if (tiled_) {
      MaxOfColumns(image, columns, in_h * out_w);
    } else {
      for (int64_t h = 0; h < in_h; ++h) ColumnMaxima(image + h * in_w, columns + h * out_w);
    }
    T* out = y + plane * out_h * out_w;
    for (int64_t oh = 0; oh < out_h; ++oh, out += out_w) {
      const int64_t top = oh * g.strides[0] - g.pad_begin[0];
      const OffsetRange rows = OffsetsWithin(top, 1, g.kernel[0], 0, in_h);
      const T* first = columns + (top + rows.first) * out_w;
      std::copy(first, first + out_w, out);
      for (int64_t kh = rows.first + 1; kh < rows.last; ++kh) {
        const T* row = columns + (top + kh) * out_w;
        for (int64_t w = 0; w < out_w; ++w) out[w] = row[w] > out[w] ? row[w] : out[w];
      }
    }
  }
}

template <typename T>
void TwoPassMaxPool::ColumnMaxima(const T* row, T* out) const {
  const WindowGeometry& g = geometry_;
  const int64_t stride = g.strides[1], pad = g.pad_begin[1];
  const auto clipped = [&](int64_t ow) {
    const int64_t left = ow * stride - pad;
    const OffsetRange inside =
        edge_taps_[ow < inner_columns_.first ? ow : ow - inner_columns_.count()];
    T m = row[left + inside.first];
    for (int64_t kw = inside.first + 1; kw < inside.last; ++kw) {
      m = row[left + kw] > m ? row[left + kw] : m;
    }
    out[ow] = m;
  };
  for (int64_t ow = 0; ow < inner_columns_.first; ++ow) clipped(ow);
  MaxOfColumns(row + inner_columns_.first * stride - pad, out + inner_columns_.first,
               inner_columns_.count());
  for (int64_t ow = inner_columns_.last; ow < g.out[1]; ++ow) clipped(ow);
}

template <typename T>
void TwoPassMaxPool::MaxOfColumns(const T* row, T* out, int64_t count) const {
  const int64_t width = geometry_.kernel[1], stride = geometry_.strides[1];
  if (width == 2 && stride == 2) {
    if constexpr (std::is_same_v<T, float>) return MaxOfPairs(row, out, count);
    return MaxOfFixedColumns<T, 2, 2>(row, out, count);
  }
  if (width == 3 && stride == 2) {
    if constexpr (std::is_same_v<T, float>) return MaxOfStridedTriples(row, out, count);
    return MaxOfFixedColumns<T, 3, 2>(row, out, count);
  }
  if (width == 3 && stride == 1) return MaxOfFixedColumns<T, 3, 1>(row, out, count);
  for (int64_t ow = 0; ow < count; ++ow) {
    const T* window = row + ow * stride;
    T m = window[0];
    for (int64_t kw = 1; kw < width; ++kw) m = window[kw] > m ? window[kw] : m;
    out[ow] = m;
  }
}

template void TwoPassMaxPool::Run(const float*, float*);
template void TwoPassMaxPool::Run(const int8_t*, int8_t*);
template void TwoPassMaxPool::Run(const uint8_t*, uint8_t*);

}  // namespace nxrt::cpu
