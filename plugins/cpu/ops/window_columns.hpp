// The lowering of a convolution to matrix products that the Conv and
// ConvTranspose kernels share where oneDNN does not serve them: a row-major
// GEMM on OpenBLAS, the walk over every (channel, kernel offset, output
// position) of a window, the row-wise im2col for two spatial axes, and the
// claim both ops make.
#pragma once

#include <cblas.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "cpu_kernel.hpp"
#include "window_geometry.hpp"

namespace nxrt::cpu {

inline void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                 const float* b, float beta, float* c) {
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, a, static_cast<int>(trans_a ? m : k), b,
              static_cast<int>(trans_b ? k : n), beta, c, static_cast<int>(n));
}
inline void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const double* a,
                 const double* b, double beta, double* c) {
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0, a, static_cast<int>(trans_a ? m : k), b,
              static_cast<int>(trans_b ? k : n), beta, c, static_cast<int>(n));
}

// Visits every (channel, kernel offset, output position) of a window walk:
// visit(column_row, column_col, input_offset_or_-1). Rows are channel-major
// then kernel position; columns are output positions.
template <typename Visit>
void WalkWindows(const WindowGeometry& g, int64_t channels, Visit&& visit) {
  const size_t rank = g.in.size();
  const int64_t kernel_size = ElementCount(g.kernel);
  const int64_t out_size = ElementCount(g.out);
  const int64_t in_size = ElementCount(g.in);
  const Dims in_strides = StridesOf(g.in);
  std::vector<int64_t> k_index(rank), o_index(rank);
  for (int64_t c = 0; c < channels; ++c) {
    std::fill(k_index.begin(), k_index.end(), 0);
    for (int64_t k = 0; k < kernel_size; ++k) {
      const int64_t row = c * kernel_size + k;
      std::fill(o_index.begin(), o_index.end(), 0);
      for (int64_t o = 0; o < out_size; ++o) {
        int64_t offset = c * in_size;
        bool inside = true;
        for (size_t a = 0; a < rank; ++a) {
          const int64_t pos =
              o_index[a] * g.strides[a] - g.pad_begin[a] + k_index[a] * g.dilations[a];
          if (pos < 0 || pos >= g.in[a]) {
            inside = false;
            break;
          }
          offset += pos * in_strides[a];
        }
        visit(row, o, inside ? offset : -1);
        for (size_t a = rank; a-- > 0;) {
          if (++o_index[a] < g.out[a]) break;
          o_index[a] = 0;
        }
      }
      for (size_t a = rank; a-- > 0;) {
        if (++k_index[a] < g.kernel[a]) break;
        k_index[a] = 0;
      }
    }
  }
}

// im2col for two spatial axes, the common case: whole output rows at a time,
// a straight copy when the stride is 1, zeros where the window leaves the
// image. Same layout as WalkWindows.
template <typename T>
void Im2Col2d(const WindowGeometry& g, int64_t channels, const T* image, T* columns) {
  const int64_t in_h = g.in[0], in_w = g.in[1];
  const int64_t out_h = g.out[0], out_w = g.out[1];
  const int64_t stride_h = g.strides[0], stride_w = g.strides[1];
  for (int64_t c = 0; c < channels; ++c) {
    const T* plane = image + c * in_h * in_w;
    for (int64_t kh = 0; kh < g.kernel[0]; ++kh) {
      for (int64_t kw = 0; kw < g.kernel[1]; ++kw) {
        const int64_t w_shift = kw * g.dilations[1] - g.pad_begin[1];
        // Output columns whose input column lies inside the image.
        int64_t first = 0;
        while (first < out_w && first * stride_w + w_shift < 0) ++first;
        int64_t last = out_w;
        while (last > first && (last - 1) * stride_w + w_shift >= in_w) --last;
        for (int64_t oh = 0; oh < out_h; ++oh) {
          const int64_t ih = oh * stride_h + kh * g.dilations[0] - g.pad_begin[0];
          if (ih < 0 || ih >= in_h) {
            std::fill(columns, columns + out_w, T(0));
            columns += out_w;
            continue;
          }
          const T* row = plane + ih * in_w;
          std::fill(columns, columns + first, T(0));
          if (stride_w == 1) {
            std::copy(row + first + w_shift, row + last + w_shift, columns + first);
          } else {
            for (int64_t ow = first; ow < last; ++ow) columns[ow] = row[ow * stride_w + w_shift];
          }
          std::fill(columns + last, columns + out_w, T(0));
          columns += out_w;
        }
      }
    }
  }
}

using ConvTypes = TypeList<float, double>;

inline std::optional<std::string> CheckAutoPad(const sdk::Node& node) {
  const std::string auto_pad = node.AttrString("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER") {
    return std::string(node.op_type()) + ": auto_pad=" + auto_pad + " not implemented";
  }
  return std::nullopt;
}

// Claims when auto_pad is known and X and W have a dtype in `List`.
template <typename List>
ClaimFn ClaimConv(List list) {
  return [list](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
    if (auto reason = CheckAutoPad(node)) return sdk::ClaimResult::Declined(*reason);
    if (auto reason = CheckInputDtype(node, inputs, 0, list)) {
      return sdk::ClaimResult::Declined(*reason);
    }
    return ClaimUnless(CheckInputDtype(node, inputs, 1, list));
  };
}

}  // namespace nxrt::cpu
