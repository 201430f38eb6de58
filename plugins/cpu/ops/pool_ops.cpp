// Pooling over any number of spatial axes: MaxPool (with the optional
// Indices output, storage_order and dilations), AveragePool (with
// count_include_pad), LpPool, the global forms, and MaxUnpool, which scatters
// MaxPool's values back to the positions its indices name. Windows, pads and ceil
// mode come from window_geometry.hpp. A float MaxPool without the Indices
// output runs on oneDNN (onednn/plain_primitive.hpp) unless every window
// reaches the image, undilated, where the EP's own two-pass loop is faster
// (ops/two_pass_max_pool.hpp),
// or its kernel is larger than the image, which oneDNN would walk tap by tap.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "cpu_kernel.hpp"
#include "isa_clones.hpp"
#include "onednn/plain_primitive_kernel.hpp"
#include "ops/two_pass_max_pool.hpp"
#include "window_geometry.hpp"

namespace nxrt::cpu {
namespace {

enum class PoolKind { kMax, kAverage, kLp };

class PoolKernel : public CpuKernel {
 public:
  PoolKernel(PoolKind kind, bool global, const sdk::Node& node, std::span<const nxrt_shape> inputs)
      : CpuKernel(false),
        kind_(kind),
        global_(global),
        dtype_(inputs[0].dtype),
        count_include_pad_(node.AttrInt("count_include_pad", 0) != 0),
        storage_order_(node.AttrInt("storage_order", 0)),
        p_(node.AttrInt("p", 2)) {
    const Dims x(inputs[0].dims, inputs[0].dims + inputs[0].rank);
    if (x.size() < 3) FailInvalid("pool: input needs rank 3 or more");
    const Dims spatial(x.begin() + 2, x.end());
    WindowAttributes a;
    if (global) {
      a.kernel_shape = spatial;
    } else {
      a = WindowAttributes::Read(node);
    }
    geometry_ = ResolveWindow(a, spatial, a.kernel_shape, std::string(node.op_type()));
    planes_ = x[0] * x[1];
    out_dims_ = {x[0], x[1]};
    out_dims_.insert(out_dims_.end(), geometry_.out.begin(), geometry_.out.end());
    if (spatial.size() == 2) PlanColumns();
    // The global and 2-D paths allocate nothing; the general window walk and
    // the Indices output do.
    capture_safe_ =
        kind != PoolKind::kLp && node.output_count() == 1 && (global || spatial.size() == 2);
  }

  bool CaptureSafe() const override { return capture_safe_; }

  // The oneDNN kernel of a float MaxPool without indices, when oneDNN plans
  // it and TwoPassMaxPool does not apply: on the CNN's 2x2 pools that is
  // 15 us against oneDNN's 23 us on NCHW (16x64x64), and level on 32x32x32.
  std::unique_ptr<CpuKernel> OneDnnForm(const sdk::Node& node) const {
    if (kind_ != PoolKind::kMax || global_ || dtype_ != NXRT_DTYPE_FLOAT32 ||
        node.output_count() != 1 || planes_ == 0 || ElementCount(out_dims_) == 0 || two_pass_max_) {
      return nullptr;
    }
    // oneDNN walks every tap of a window, pads included: a kernel wider than
    // the image (2^62 rows under SAME padding) would not end there, while the
    // EP's own loops visit only the taps inside the image.
    for (size_t a = 0; a < geometry_.in.size(); ++a) {
      if (geometry_.kernel[a] > geometry_.in[a]) return nullptr;
    }
    auto pool = onednn::PlanMaxPool(out_dims_[0], out_dims_[1], geometry_);
    if (!pool) return nullptr;
    return std::make_unique<PlainPrimitiveKernel>(std::move(*pool), out_dims_);
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, out_dims_);
    int64_t* indices = nullptr;
    if (outputs.size() > 1 && outputs[1].kind == NXRT_VALUE_TENSOR) {
      indices = MutableDataAs<int64_t>(PrepareOutput(ctx, outputs, 1, NXRT_DTYPE_INT64, out_dims_));
    }
    Dispatch(
        TypeList<float, double, Float16, BFloat16, int8_t, uint8_t>{}, dtype_, "pool",
        [&](auto tag) {
          using T = typename decltype(tag)::type;
          if (global_ && kind_ != PoolKind::kLp && indices == nullptr) {
            RunGlobal<T>(DataAs<T>(inputs[0].tensor), MutableDataAs<T>(out));
          } else if (geometry_.in.size() == 2 && kind_ != PoolKind::kLp && indices == nullptr) {
            if constexpr (std::is_same_v<T, float> || sizeof(T) == 1) {
              if (two_pass_max_) {
                two_pass_max_->Run(DataAs<T>(inputs[0].tensor), MutableDataAs<T>(out));
                return;
              }
            }
            if (kind_ == PoolKind::kMax) {
              Run2d<T, true>(DataAs<T>(inputs[0].tensor), MutableDataAs<T>(out));
            } else {
              Run2d<T, false>(DataAs<T>(inputs[0].tensor), MutableDataAs<T>(out));
            }
          } else {
            Run<T>(DataAs<T>(inputs[0].tensor), MutableDataAs<T>(out), indices);
          }
        });
  }

 private:
  // The global forms: one reduction over each whole plane, in eight
  // independent chains so the adds (or comparisons) overlap instead of
  // waiting on each other.
  template <typename T>
  void RunGlobal(const T* x, T* y) const {
    if (kind_ == PoolKind::kMax) {
      RunGlobal<T, true>(x, y);
    } else {
      RunGlobal<T, false>(x, y);
    }
  }

  template <typename T, bool kMax>
  NXRT_ISA_CLONES void RunGlobal(const T* x, T* y) const {
    constexpr int kChains = 8;
    const int64_t size = ElementCount(geometry_.in);
    const auto combine = [](double acc, double v) { return kMax ? (v > acc ? v : acc) : acc + v; };
    for (int64_t plane = 0; plane < planes_; ++plane) {
      const T* p = x + plane * size;
      double chains[kChains];
      std::fill(chains, chains + kChains, kMax ? -std::numeric_limits<double>::infinity() : 0.0);
      int64_t i = 0;
      for (; i + kChains <= size; i += kChains) {
        for (int c = 0; c < kChains; ++c) {
          chains[c] =
              combine(chains[c], static_cast<double>(static_cast<ComputeType<T>>(p[i + c])));
        }
      }
      for (; i < size; ++i) {
        chains[0] = combine(chains[0], static_cast<double>(static_cast<ComputeType<T>>(p[i])));
      }
      double acc = chains[0];
      for (int c = 1; c < kChains; ++c) acc = combine(acc, chains[c]);
      if (!kMax) acc = size ? acc / static_cast<double>(size) : 0.0;
      y[plane] = static_cast<T>(static_cast<ComputeType<T>>(acc));
    }
  }

  // Max and average pooling over two spatial axes without indices, the
  // common case: each output row accumulates whole input row segments, one
  // kernel offset at a time. A window is a rectangle, so its count of
  // positions inside the image (or the pads) is the product of its row and
  // column counts.
  template <typename T, bool kMax>
  void Run2d(const T* x, T* y) {
    // A maximum of floats is exact in float, which halves the loop's work
    // against double; sums widen to double.
    using Acc = std::conditional_t<kMax && std::is_same_v<ComputeType<T>, float>, float, double>;
    const WindowGeometry& g = geometry_;
    const int64_t in_h = g.in[0], in_w = g.in[1];
    const int64_t out_h = g.out[0], out_w = g.out[1];
    const int64_t stride_w = g.strides[1];
    Acc* acc = nullptr;
    if constexpr (std::is_same_v<Acc, float>) {
      acc = row_maxima_.data();
    } else {
      acc = row_scratch_.data();
    }
    for (int64_t plane = 0; plane < planes_; ++plane) {
      const T* image = x + plane * in_h * in_w;
      T* out = y + plane * out_h * out_w;
      for (int64_t oh = 0; oh < out_h; ++oh, out += out_w) {
        std::fill(acc, acc + out_w, kMax ? -std::numeric_limits<Acc>::infinity() : Acc(0));
        const int64_t top = oh * g.strides[0] - g.pad_begin[0];
        const OffsetRange rows = OffsetsWithin(top, g.dilations[0], g.kernel[0], 0, in_h);
        const int64_t rows_inside = rows.count();
        const int64_t rows_in_pads =
            OffsetsWithin(top, g.dilations[0], g.kernel[0], -g.pad_begin[0], in_h + g.pad_end[0])
                .count();
        for (int64_t kh = rows.first; kh < rows.last; ++kh) {
          const T* row = image + (top + kh * g.dilations[0]) * in_w;
          for (int64_t kw = kernel_columns_.first; kw < kernel_columns_.last; ++kw) {
            const int64_t shift = kw * g.dilations[1] - g.pad_begin[1];
            const int64_t column = kw - kernel_columns_.first;
            // The kind is a template argument so this loop has no branch
            // left to keep it from vectorising.
            for (int64_t ow = column_first_[column]; ow < column_last_[column]; ++ow) {
              const Acc v =
                  static_cast<Acc>(static_cast<ComputeType<T>>(row[ow * stride_w + shift]));
              acc[ow] = kMax ? (v > acc[ow] ? v : acc[ow]) : acc[ow] + v;
            }
          }
        }
        for (int64_t ow = 0; ow < out_w; ++ow) {
          double value = static_cast<double>(acc[ow]);
          if (!kMax) {
            // In double: a SAME-padded window's count can pass 64 bits.
            const double divisor =
                count_include_pad_
                    ? static_cast<double>(rows_in_pads) * static_cast<double>(columns_in_pads_[ow])
                    : static_cast<double>(rows_inside * columns_inside_[ow]);
            value = divisor != 0 ? value / divisor : 0.0;
          }
          out[ow] = static_cast<T>(static_cast<ComputeType<T>>(value));
        }
      }
    }
  }

  template <typename T>
  void Run(const T* x, T* y, int64_t* indices) const {
    const WindowGeometry& g = geometry_;
    const size_t rank = g.in.size();
    const int64_t in_size = ElementCount(g.in);
    const int64_t out_size = ElementCount(g.out);
    const Dims in_strides = StridesOf(g.in);
    std::vector<int64_t> o_index(rank), k_index(rank), starts(rank);
    std::vector<OffsetRange> inside(rank);
    for (int64_t plane = 0; plane < planes_; ++plane) {
      const T* image = x + plane * in_size;
      std::fill(o_index.begin(), o_index.end(), 0);
      for (int64_t o = 0; o < out_size; ++o) {
        double acc = kind_ == PoolKind::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
        int64_t best = -1;
        // The window's positions in the image form a box, walked in the
        // window's row-major order; those in the pads are only counted.
        int64_t valid = 1;
        double padded = 1;  // in double: a SAME-padded window's count can pass 64 bits
        for (size_t a = 0; a < rank; ++a) {
          starts[a] = o_index[a] * g.strides[a] - g.pad_begin[a];
          inside[a] = OffsetsWithin(starts[a], g.dilations[a], g.kernel[a], 0, g.in[a]);
          valid *= inside[a].count();
          padded *= static_cast<double>(OffsetsWithin(starts[a], g.dilations[a], g.kernel[a],
                                                      -g.pad_begin[a], g.in[a] + g.pad_end[a])
                                            .count());
          k_index[a] = inside[a].first;
        }
        for (int64_t k = 0; k < valid; ++k) {
          int64_t offset = 0;
          for (size_t a = 0; a < rank; ++a) {
            offset += (starts[a] + k_index[a] * g.dilations[a]) * in_strides[a];
          }
          const double v = static_cast<double>(static_cast<ComputeType<T>>(image[offset]));
          if (kind_ == PoolKind::kMax) {
            if (v > acc || best < 0) {
              acc = v;
              best = offset;
            }
          } else if (kind_ == PoolKind::kLp) {
            acc += std::pow(std::abs(v), static_cast<double>(p_));
          } else {
            acc += v;
          }
          for (size_t a = rank; a-- > 0;) {
            if (++k_index[a] < inside[a].last) break;
            k_index[a] = inside[a].first;
          }
        }
        if (kind_ == PoolKind::kAverage) {
          const double divisor = count_include_pad_ ? padded : static_cast<double>(valid);
          acc = divisor != 0 ? acc / divisor : 0.0;
        } else if (kind_ == PoolKind::kLp) {
          acc = std::pow(acc, 1.0 / static_cast<double>(p_));
        }
        y[plane * out_size + o] = static_cast<T>(static_cast<ComputeType<T>>(acc));
        if (indices) indices[plane * out_size + o] = plane * in_size + StorageIndex(best);
        for (size_t a = rank; a-- > 0;) {
          if (++o_index[a] < g.out[a]) break;
          o_index[a] = 0;
        }
      }
    }
  }

  // For Run2d: per kernel column, the output columns whose input column is
  // inside the image; per output column, its window's columns inside the
  // image and inside the pads.
  void PlanColumns() {
    const WindowGeometry& g = geometry_;
    const int64_t in_w = g.in[1], out_w = g.out[1];
    row_scratch_.assign(out_w, 0.0);
    if (kind_ == PoolKind::kMax) two_pass_max_ = TwoPassMaxPool::Plan(g, planes_);
    row_maxima_.assign(out_w, 0.0f);
    columns_inside_.assign(out_w, 0);
    columns_in_pads_.assign(out_w, 0);
    // Only the kernel columns that land in the image for some output column
    // are walked, so the work follows the image, not the window.
    kernel_columns_ = {g.kernel[1], 0};
    for (int64_t ow = 0; ow < out_w; ++ow) {
      const int64_t left = ow * g.strides[1] - g.pad_begin[1];
      const OffsetRange inside = OffsetsWithin(left, g.dilations[1], g.kernel[1], 0, in_w);
      columns_inside_[ow] = inside.count();
      columns_in_pads_[ow] =
          OffsetsWithin(left, g.dilations[1], g.kernel[1], -g.pad_begin[1], in_w + g.pad_end[1])
              .count();
      if (inside.count() == 0) continue;
      kernel_columns_.first = std::min(kernel_columns_.first, inside.first);
      kernel_columns_.last = std::max(kernel_columns_.last, inside.last);
    }
    kernel_columns_.last = std::max(kernel_columns_.first, kernel_columns_.last);
    for (int64_t kw = kernel_columns_.first; kw < kernel_columns_.last; ++kw) {
      const int64_t shift = kw * g.dilations[1] - g.pad_begin[1];
      int64_t first = out_w, last = 0;
      for (int64_t ow = 0; ow < out_w; ++ow) {
        const int64_t w = ow * g.strides[1] + shift;
        if (w < 0 || w >= in_w) continue;
        first = std::min(first, ow);
        last = ow + 1;
      }
      column_first_.push_back(first);
      column_last_.push_back(std::max(first, last));
    }
  }

  // The flat index of a row-major offset, in column-major order when
  // storage_order is 1.
  int64_t StorageIndex(int64_t offset) const {
    if (storage_order_ == 0 || offset < 0) return offset;
    const Dims& in = geometry_.in;
    int64_t index = 0;
    int64_t stride = 1;
    Dims coords(in.size());
    for (size_t a = in.size(); a-- > 0;) {
      coords[a] = offset % in[a];
      offset /= in[a];
    }
    for (size_t a = 0; a < in.size(); ++a) {
      index += coords[a] * stride;
      stride *= in[a];
    }
    return index;
  }

  PoolKind kind_;
  bool global_;
  nxrt_dtype dtype_;
  bool count_include_pad_;
  int64_t storage_order_;
  int64_t p_;
  WindowGeometry geometry_;
  int64_t planes_ = 0;
  Dims out_dims_;
  std::vector<double> row_scratch_;                  // Run2d's row of sums, or maxima of doubles
  std::vector<float> row_maxima_;                    // Run2d's row of maxima of floats
  std::optional<TwoPassMaxPool> two_pass_max_;       // max pooling whose windows reach the image
  OffsetRange kernel_columns_;                       // Run2d's kernel columns that reach the image
  std::vector<int64_t> column_first_, column_last_;  // per kernel column of kernel_columns_
  std::vector<int64_t> columns_inside_, columns_in_pads_;
  bool capture_safe_ = false;
};

using PoolTypes = TypeList<float, double, Float16, BFloat16, int8_t, uint8_t>;

void AddPool(OpRegistry& r, const char* name, PoolKind kind, bool global) {
  r.Add(name, {1,
               [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
                 const std::string auto_pad = node.AttrString("auto_pad", "NOTSET");
                 if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
                     auto_pad != "SAME_LOWER") {
                   return sdk::ClaimResult::Declined(std::string(node.op_type()) +
                                                     ": auto_pad=" + auto_pad + " not implemented");
                 }
                 return ClaimUnless(CheckInputDtype(node, inputs, 0, PoolTypes{}));
               },
               [kind, global](const sdk::Node& node, std::span<const nxrt_shape> inputs,
                              int64_t) -> std::unique_ptr<CpuKernel> {
                 auto pool = std::make_unique<PoolKernel>(kind, global, node, inputs);
                 if (auto fast = pool->OneDnnForm(node)) return fast;
                 return pool;
               }});
}

class MaxUnpoolKernel : public CpuKernel {
 public:
  MaxUnpoolKernel(const sdk::Node& node, nxrt_dtype dtype)
      : CpuKernel(false), attributes_(WindowAttributes::Read(node)), dtype_(dtype) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const Dims dims = DimsOf(x);
    // Indices address the unpooled tensor of the default shape; an explicit
    // output_shape re-places each at the same coordinates in a larger one.
    const size_t rank = dims.size() - 2;
    Dims default_dims = {dims[0], dims[1]};
    for (size_t i = 0; i < rank; ++i) {
      const int64_t stride = attributes_.strides.empty() ? 1 : attributes_.strides[i];
      const int64_t pads =
          attributes_.pads.empty() ? 0 : attributes_.pads[i] + attributes_.pads[i + rank];
      default_dims.push_back((dims[i + 2] - 1) * stride + attributes_.kernel_shape.at(i) - pads);
    }
    const Dims out_dims = IsPresent(inputs, 2) ? ReadInt64s(inputs[2].tensor) : default_dims;
    if (out_dims.size() != default_dims.size()) FailInvalid("MaxUnpool: output_shape rank");
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, out_dims);
    const size_t size = ElementSize(dtype_);
    const int64_t out_count = ElementCount(out_dims);
    const int64_t default_count = ElementCount(default_dims);
    std::memset(out.data, 0, out_count * size);
    const std::vector<int64_t> indices = ReadInt64s(inputs[1].tensor);
    const Dims default_strides = StridesOf(default_dims);
    const Dims out_strides = StridesOf(out_dims);
    const auto* src = static_cast<const std::byte*>(x.data);
    auto* dst = static_cast<std::byte*>(out.data);
    for (size_t i = 0; i < indices.size(); ++i) {
      if (indices[i] < 0 || indices[i] >= default_count) {
        FailInvalid("MaxUnpool: index out of range");
      }
      int64_t target = 0;
      for (size_t a = 0; a < default_dims.size(); ++a) {
        const int64_t coord = (indices[i] / default_strides[a]) % default_dims[a];
        if (coord >= out_dims[a]) FailInvalid("MaxUnpool: output_shape smaller than the input");
        target += coord * out_strides[a];
      }
      std::memcpy(dst + target * size, src + i * size, size);
    }
  }

 private:
  WindowAttributes attributes_;
  nxrt_dtype dtype_;
};

}  // namespace

void RegisterPoolOps(OpRegistry& r) {
  AddPool(r, "MaxPool", PoolKind::kMax, false);
  AddPool(r, "AveragePool", PoolKind::kAverage, false);
  AddPool(r, "LpPool", PoolKind::kLp, false);
  AddPool(r, "GlobalMaxPool", PoolKind::kMax, true);
  AddPool(r, "GlobalAveragePool", PoolKind::kAverage, true);
  AddPool(r, "GlobalLpPool", PoolKind::kLp, true);
  r.Add("MaxUnpool", {9, ClaimInputDtype(FloatTypes{}),
                      [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
                        return std::make_unique<MaxUnpoolKernel>(node, inputs[0].dtype);
                      }});
}

}  // namespace nxrt::cpu
