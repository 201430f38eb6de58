// Conv for float, double and (through float) the 16-bit floats, and
// ConvTranspose for float and double, any number of spatial axes, with groups,
// pads, strides, dilations and auto_pad; ConvInteger and QLinearConv run the
// double Conv on zero-point-shifted 8-bit data (exact: every partial sum is an
// integer far below 2^53), QLinearConv then requantising. A float Conv with
// one to three spatial axes runs on oneDNN (onednn/float_convolution.hpp),
// its constant weights prepared once and shared between shape variants; the
// others lower each image and group to im2col (a row-wise path for 2-D) + one
// GEMM, and ConvTranspose to one GEMM + col2im. Buffers are sized when the
// kernel is made, so compute allocates nothing.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <optional>

#include "cpu_kernel.hpp"
#include "onednn/float_convolution.hpp"
#include "onednn/reference_notice.hpp"
#include "window_geometry.hpp"

namespace nxrt::cpu {
namespace {

void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
          const float* b, float beta, float* c) {
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, a, static_cast<int>(trans_a ? m : k), b,
              static_cast<int>(trans_b ? k : n), beta, c, static_cast<int>(n));
}
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const double* a,
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

class ConvKernel : public CpuKernel {
 public:
  ConvKernel(const sdk::Host& host, const sdk::Node& node, std::span<const nxrt_shape> inputs)
      : CpuKernel(false),
        dtype_(inputs[0].dtype),
        group_(node.AttrInt("group", 1)),
        relu_(node.op_type() == "FusedConv") {
    const Dims x(inputs[0].dims, inputs[0].dims + inputs[0].rank);
    const Dims w(inputs[1].dims, inputs[1].dims + inputs[1].rank);
    if (x.size() < 3 || w.size() != x.size()) FailInvalid("Conv: X and W need rank 3 or more");
    WindowAttributes attributes = WindowAttributes::Read(node);
    const Dims kernel(w.begin() + 2, w.end());
    geometry_ = ResolveWindow(attributes, Dims(x.begin() + 2, x.end()), kernel, "Conv");
    batch_ = x[0];
    channels_ = x[1];
    maps_ = w[0];
    if (group_ < 1) FailInvalid("Conv: group must be positive; fix the group attribute");
    if (channels_ % group_ != 0 || maps_ % group_ != 0 || w[1] * group_ != channels_) {
      FailInvalid("Conv: channels do not split into groups");
    }
    RequireElements(inputs, 2, maps_, "Conv", "B, one value per output map");
    out_dims_ = {batch_, maps_};
    out_dims_.insert(out_dims_.end(), geometry_.out.begin(), geometry_.out.end());
    if (dtype_ != NXRT_DTYPE_FLOAT64 && ElementCount(out_dims_) > 0 && ElementCount(w) > 0) {
      const bool bias = inputs.size() > 2 && inputs[2].dtype != NXRT_DTYPE_UNDEFINED;
      onednn_ = onednn::FloatConvolution::Plan(
          {batch_, channels_, maps_, group_, geometry_, bias, relu_});
      if (onednn_ && onednn::IsReference(onednn_->implementation())) {
        onednn::NoteReferenceKernel(host,
                                    "node '" + std::string(node.name()) + "' (" +
                                        std::string(node.op_type()) + ") at X " + DimsText(x) +
                                        ", W " + DimsText(w),
                                    onednn_->implementation());
      }
    }
    if (!onednn_) {
      const int64_t rows = (channels_ / group_) * ElementCount(kernel);
      columns_.resize(rows * ElementCount(geometry_.out) * (dtype_ == NXRT_DTYPE_FLOAT64 ? 2 : 1));
    }
    if (dtype_ == NXRT_DTYPE_FLOAT16 || dtype_ == NXRT_DTYPE_BFLOAT16) {
      wide_x_.resize(ElementCount(x));
      wide_w_.resize(ElementCount(w));
      wide_bias_.resize(maps_);
      wide_y_.resize(ElementCount(out_dims_));
    }
  }

  void PrepareConstantInputs(std::span<const nxrt_constant_input> constants) override {
    for (const nxrt_constant_input& c : constants) {
      if (c.input_index != 1 || !onednn_) continue;
      if (dtype_ == NXRT_DTYPE_FLOAT32) {
        weights_ = onednn_->PrepareWeights(static_cast<const float*>(c.bytes));
      } else {
        Dispatch(TypeList<Float16, BFloat16>{}, dtype_, "Conv", [&](auto tag) {
          using T = typename decltype(tag)::type;
          std::copy_n(static_cast<const T*>(c.bytes), wide_w_.size(), wide_w_.begin());
        });
        weights_ = onednn_->PrepareWeights(wide_w_.data());
      }
    }
  }
  std::shared_ptr<sdk::SharedState> ShareableConstantState() override { return weights_; }
  // Compute allocates nothing on oneDNN with prepared weights, or through the
  // row-wise 2-D im2col; the general window walk keeps counters on the heap.
  bool CaptureSafe() const override {
    return onednn_ ? weights_ != nullptr : geometry_.in.size() == 2;
  }
  bool AdoptShareableConstantState(const std::shared_ptr<sdk::SharedState>& state) override {
    auto weights = std::dynamic_pointer_cast<onednn::PreparedWeights>(state);
    if (!weights || !onednn_ || !onednn_->Takes(*weights)) return false;
    weights_ = std::move(weights);
    return true;
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, out_dims_);
    if (ElementCount(out_dims_) == 0) return;
    const bool has_bias = IsPresent(inputs, 2);
    if (dtype_ == NXRT_DTYPE_FLOAT64) {
      Run(DataAs<double>(inputs[0].tensor), DataAs<double>(inputs[1].tensor),
          has_bias ? DataAs<double>(inputs[2].tensor) : nullptr, MutableDataAs<double>(out));
    } else if (dtype_ == NXRT_DTYPE_FLOAT32) {
      Run(DataAs<float>(inputs[0].tensor), DataAs<float>(inputs[1].tensor),
          has_bias ? DataAs<float>(inputs[2].tensor) : nullptr, MutableDataAs<float>(out));
    } else {
      // The 16-bit floats run the float GEMM on widened copies.
      Dispatch(TypeList<Float16, BFloat16>{}, dtype_, "Conv", [&](auto tag) {
        using T = typename decltype(tag)::type;
        auto widen = [](const nxrt_tensor& t, std::vector<float>& to) {
          std::copy_n(DataAs<T>(t), to.size(), to.begin());
        };
        widen(inputs[0].tensor, wide_x_);
        if (!weights_) widen(inputs[1].tensor, wide_w_);
        if (has_bias) widen(inputs[2].tensor, wide_bias_);
        Run(wide_x_.data(), wide_w_.data(), has_bias ? wide_bias_.data() : nullptr, wide_y_.data());
        std::transform(wide_y_.begin(), wide_y_.end(), MutableDataAs<T>(out),
                       [](float v) { return static_cast<T>(v); });
      });
    }
  }

  const Dims& out_dims() const { return out_dims_; }

 private:
  template <typename T>
  void Run(const T* x, const T* w, const T* bias, T* y) {
    if constexpr (std::is_same_v<T, float>) {
      if (onednn_) {
        onednn_->Run(x, w, weights_.get(), bias, y);
        return;
      }
    }
    T* columns = reinterpret_cast<T*>(columns_.data());
    const int64_t group_channels = channels_ / group_;
    const int64_t group_maps = maps_ / group_;
    const int64_t in_size = ElementCount(geometry_.in);
    const int64_t out_size = ElementCount(geometry_.out);
    const int64_t rows = group_channels * ElementCount(geometry_.kernel);
    for (int64_t n = 0; n < batch_; ++n) {
      for (int64_t g = 0; g < group_; ++g) {
        const T* image = x + (n * channels_ + g * group_channels) * in_size;
        if (geometry_.in.size() == 2) {
          Im2Col2d(geometry_, group_channels, image, columns);
        } else {
          WalkWindows(geometry_, group_channels, [&](int64_t row, int64_t col, int64_t offset) {
            columns[row * out_size + col] = offset < 0 ? T(0) : image[offset];
          });
        }
        T* dst = y + (n * maps_ + g * group_maps) * out_size;
        Gemm(false, false, group_maps, out_size, rows, w + g * group_maps * rows, columns, T(0),
             dst);
      }
      if (bias) {
        for (int64_t m = 0; m < maps_; ++m) {
          T* plane = y + (n * maps_ + m) * out_size;
          for (int64_t i = 0; i < out_size; ++i) plane[i] += bias[m];
        }
      }
    }
    if (relu_) {
      T* end = y + batch_ * maps_ * out_size;
      for (T* v = y; v < end; ++v) *v = *v < T(0) ? T(0) : *v;  // NaN stays NaN
    }
  }

  nxrt_dtype dtype_;
  int64_t group_;
  bool relu_;  // com.microsoft FusedConv with activation Relu
  WindowGeometry geometry_;
  int64_t batch_ = 0;
  int64_t channels_ = 0;
  int64_t maps_ = 0;
  Dims out_dims_;
  std::optional<onednn::FloatConvolution> onednn_;
  std::shared_ptr<onednn::PreparedWeights> weights_;  // constant W, prepared for onednn_
  std::vector<float> columns_;                        // im2col's; doubles take two floats each
  // Float copies of 16-bit float operands and result.
  std::vector<float> wide_x_, wide_w_, wide_bias_, wide_y_;
};

class ConvTransposeKernel : public CpuKernel {
 public:
  ConvTransposeKernel(const sdk::Node& node, std::span<const nxrt_shape> inputs)
      : CpuKernel(false), dtype_(inputs[0].dtype), group_(node.AttrInt("group", 1)) {
    const Dims x(inputs[0].dims, inputs[0].dims + inputs[0].rank);
    const Dims w(inputs[1].dims, inputs[1].dims + inputs[1].rank);
    if (x.size() < 3 || w.size() != x.size()) {
      FailInvalid("ConvTranspose: X and W need rank 3 or more");
    }
    const size_t rank = x.size() - 2;
    batch_ = x[0];
    channels_ = x[1];
    if (group_ < 1) FailInvalid("ConvTranspose: group must be positive; fix the group attribute");
    maps_ = w[1] * group_;
    if (w[0] != channels_ || channels_ % group_ != 0) {
      FailInvalid("ConvTranspose: channels do not split into groups");
    }
    RequireElements(inputs, 2, maps_, "ConvTranspose", "B, one value per output map");
    WindowAttributes a = WindowAttributes::Read(node);
    const Dims in(x.begin() + 2, x.end());
    const Dims kernel(w.begin() + 2, w.end());
    CheckWindowAttributes(a, kernel, "ConvTranspose");
    Dims output_padding = node.AttrInts("output_padding");
    if (output_padding.empty()) output_padding.assign(rank, 0);
    const Dims output_shape = node.AttrInts("output_shape");
    if (output_padding.size() != rank || std::any_of(output_padding.begin(), output_padding.end(),
                                                     [](int64_t p) { return p < 0; })) {
      FailInvalid("ConvTranspose: output_padding needs one extent of 0 or more per spatial axis");
    }
    if (!output_shape.empty() && output_shape.size() < rank) {
      FailInvalid("ConvTranspose: output_shape names fewer extents than the spatial axes");
    }
    WindowGeometry& g = geometry_;
    g.kernel = kernel;
    g.strides = a.strides.empty() ? Dims(rank, 1) : a.strides;
    g.dilations = a.dilations.empty() ? Dims(rank, 1) : a.dilations;
    g.pad_begin.assign(rank, 0);
    g.pad_end.assign(rank, 0);
    g.in.assign(rank, 0);
    // The transposed conv's output is the plain conv's input, and vice versa.
    g.out = in;
    for (size_t i = 0; i < rank; ++i) {
      const int64_t extent = (kernel[i] - 1) * g.dilations[i] + 1;
      const int64_t full = g.strides[i] * (in[i] - 1) + output_padding[i] + extent;
      const bool same = a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER";
      if (!output_shape.empty() || same) {
        const int64_t target = !output_shape.empty() ? output_shape[output_shape.size() - rank + i]
                                                     : in[i] * g.strides[i];
        // A negative total (output_shape beyond the full extent) halves with
        // floor division, as ONNX specifies it.
        const int64_t total = full - target;
        const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
        if (a.auto_pad == "SAME_UPPER") {
          g.pad_begin[i] = half;
          g.pad_end[i] = total - half;
        } else {
          g.pad_begin[i] = total - half;
          g.pad_end[i] = half;
        }
      } else if (!a.pads.empty() && a.auto_pad != "VALID") {
        g.pad_begin[i] = a.pads[i];
        g.pad_end[i] = a.pads[i + rank];
      }
      g.in[i] = full - g.pad_begin[i] - g.pad_end[i];
    }
    out_dims_ = {batch_, maps_};
    out_dims_.insert(out_dims_.end(), g.in.begin(), g.in.end());
    const int64_t rows = (maps_ / group_) * ElementCount(kernel);
    columns_.resize(rows * ElementCount(in) * (dtype_ == NXRT_DTYPE_FLOAT64 ? 2 : 1));
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, out_dims_);
    if (ElementCount(out_dims_) == 0) return;
    if (dtype_ == NXRT_DTYPE_FLOAT64) {
      Run<double>(inputs, out);
    } else {
      Run<float>(inputs, out);
    }
  }

 private:
  template <typename T>
  void Run(std::span<const nxrt_value> inputs, nxrt_tensor& out) {
    const T* x = DataAs<T>(inputs[0].tensor);
    const T* w = DataAs<T>(inputs[1].tensor);
    const T* bias = IsPresent(inputs, 2) ? DataAs<T>(inputs[2].tensor) : nullptr;
    T* y = MutableDataAs<T>(out);
    T* columns = reinterpret_cast<T*>(columns_.data());
    const int64_t group_channels = channels_ / group_;
    const int64_t group_maps = maps_ / group_;
    const int64_t x_size = ElementCount(geometry_.out);  // input positions
    const int64_t y_size = ElementCount(geometry_.in);   // output positions
    const int64_t rows = group_maps * ElementCount(geometry_.kernel);
    std::fill(y, y + ElementCount(out_dims_), T(0));
    for (int64_t n = 0; n < batch_; ++n) {
      for (int64_t g = 0; g < group_; ++g) {
        // columns[rows, x_size] = W_g^T [rows, group_channels] * X_g [group_channels, x_size]
        Gemm(true, false, rows, x_size, group_channels, w + g * group_channels * rows,
             x + (n * channels_ + g * group_channels) * x_size, T(0), columns);
        T* image = y + (n * maps_ + g * group_maps) * y_size;
        WalkWindows(geometry_, group_maps, [&](int64_t row, int64_t col, int64_t offset) {
          if (offset >= 0) image[offset] += columns[row * x_size + col];
        });
      }
      if (bias) {
        for (int64_t m = 0; m < maps_; ++m) {
          T* plane = y + (n * maps_ + m) * y_size;
          for (int64_t i = 0; i < y_size; ++i) plane[i] += bias[m];
        }
      }
    }
  }

  nxrt_dtype dtype_;
  int64_t group_;
  WindowGeometry geometry_;  // of the equivalent forward conv: `in` is our output
  int64_t batch_ = 0;
  int64_t channels_ = 0;
  int64_t maps_ = 0;
  Dims out_dims_;
  std::vector<float> columns_;
};

// ConvInteger (int32 out), or QLinearConv when `qlinear`: the int32 bias
// added, then rescaled per output map by x_scale * w_scale / y_scale, rounded
// half to even, shifted by y_zero and saturated.
class ConvIntegerKernel : public CpuKernel {
 public:
  ConvIntegerKernel(const sdk::Host& host, const sdk::Node& node,
                    std::span<const nxrt_shape> inputs, bool qlinear)
      : CpuKernel(false),
        qlinear_(qlinear),
        w_input_(qlinear ? 3 : 1),
        x_dims_(inputs[0].dims, inputs[0].dims + inputs[0].rank),
        w_dims_(inputs[w_input_].dims, inputs[w_input_].dims + inputs[w_input_].rank) {
    const std::vector<nxrt_shape> as_double{
        {sizeof(nxrt_shape), NXRT_DTYPE_FLOAT64, x_dims_.size(), x_dims_.data()},
        {sizeof(nxrt_shape), NXRT_DTYPE_FLOAT64, w_dims_.size(), w_dims_.data()}};
    conv_ = std::make_unique<ConvKernel>(host, node, as_double);
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const std::vector<double> x = Shifted(inputs, 0, 2, 1);
    const int64_t maps = w_dims_[0];
    const std::vector<double> w = Shifted(inputs, w_input_, qlinear_ ? 5 : 3, maps);
    std::vector<nxrt_value> shifted(2);
    const Dims* dims[2] = {&x_dims_, &w_dims_};
    const std::vector<double>* data[2] = {&x, &w};
    for (size_t i = 0; i < 2; ++i) {
      shifted[i].struct_size = sizeof(nxrt_value);
      shifted[i].kind = NXRT_VALUE_TENSOR;
      shifted[i].tensor = {sizeof(nxrt_tensor),
                           NXRT_DTYPE_FLOAT64,
                           NXRT_MEMORY_HOST,
                           dims[i]->size(),
                           dims[i]->data(),
                           const_cast<double*>(data[i]->data()),
                           data[i]->size() * sizeof(double)};
    }
    const Dims& out_dims = conv_->out_dims();
    std::vector<double> result(ElementCount(out_dims));
    nxrt_value out{};
    out.struct_size = sizeof(out);
    out.kind = NXRT_VALUE_TENSOR;
    out.tensor = {sizeof(nxrt_tensor),
                  NXRT_DTYPE_FLOAT64,
                  NXRT_MEMORY_HOST,
                  out_dims.size(),
                  out_dims.data(),
                  result.data(),
                  result.size() * sizeof(double)};
    conv_->Compute(ctx, shifted, std::span<nxrt_value>(&out, 1));
    if (qlinear_) {
      Requantize(ctx, inputs, outputs, result, maps);
      return;
    }
    int32_t* y = MutableDataAs<int32_t>(PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_INT32, out_dims));
    for (size_t i = 0; i < result.size(); ++i) y[i] = static_cast<int32_t>(std::llround(result[i]));
  }

 private:
  // Input `index` minus its zero point (input `zero`: a scalar, or one per
  // leading-axis slice when it has `per_slice` entries).
  std::vector<double> Shifted(std::span<const nxrt_value> inputs, size_t index, size_t zero,
                              int64_t per_slice) const {
    const nxrt_tensor& t = inputs[index].tensor;
    const int64_t count = ElementCount(t);
    std::vector<double> zeros{0.0};
    if (IsPresent(inputs, zero) && ElementCount(inputs[zero].tensor) > 0) {
      zeros.clear();
      const nxrt_tensor& z = inputs[zero].tensor;
      for (int64_t i = 0; i < ElementCount(z); ++i) {
        zeros.push_back(z.dtype == NXRT_DTYPE_UINT8 ? DataAs<uint8_t>(z)[i] : DataAs<int8_t>(z)[i]);
      }
    }
    if (zeros.size() != 1 && static_cast<int64_t>(zeros.size()) != per_slice) {
      FailInvalid(std::string(qlinear_ ? "QLinearConv" : "ConvInteger") + ": a zero point holds " +
                  std::to_string(zeros.size()) + " values; it takes one, or one per " +
                  (per_slice == 1 ? "tensor" : "output map") + " (" + std::to_string(per_slice) +
                  ")");
    }
    const int64_t slices = zeros.size() == 1 ? 1 : per_slice;
    const int64_t slice = count / std::max<int64_t>(slices, 1);
    std::vector<double> v(count);
    for (int64_t i = 0; i < count; ++i) {
      const double raw = t.dtype == NXRT_DTYPE_UINT8 ? DataAs<uint8_t>(t)[i] : DataAs<int8_t>(t)[i];
      v[i] = raw - zeros[zeros.size() == 1 ? 0 : i / slice];
    }
    return v;
  }

  void Requantize(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
                  std::span<nxrt_value> outputs, const std::vector<double>& result, int64_t maps) {
    const nxrt_tensor& w_scale = inputs[4].tensor;
    const int64_t w_scales = ElementCount(w_scale);
    if (w_scales != 1 && w_scales != maps) FailInvalid("QLinearConv: w_scale per tensor or map");
    for (size_t i : {size_t{1}, size_t{6}, size_t{7}}) {
      if (ElementCount(inputs[i].tensor) != 1) {
        FailInvalid("QLinearConv: input " + std::to_string(i) +
                    " (x_scale, y_scale, y_zero_point) holds " +
                    std::to_string(ElementCount(inputs[i].tensor)) + " values; it is one");
      }
    }
    if (IsPresent(inputs, 8) && ElementCount(inputs[8].tensor) != maps) {
      FailInvalid("QLinearConv: the bias holds " + std::to_string(ElementCount(inputs[8].tensor)) +
                  " values for " + std::to_string(maps) + " output maps");
    }
    const float x_scale = *DataAs<float>(inputs[1].tensor);
    const float y_scale = *DataAs<float>(inputs[6].tensor);
    const nxrt_tensor& y_zero = inputs[7].tensor;
    const int32_t* bias = IsPresent(inputs, 8) ? DataAs<int32_t>(inputs[8].tensor) : nullptr;
    const Dims& out_dims = conv_->out_dims();
    const int64_t plane = ElementCount(out_dims) / std::max<int64_t>(out_dims[0] * maps, 1);
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, y_zero.dtype, out_dims);
    Dispatch(TypeList<int8_t, uint8_t>{}, y_zero.dtype, "QLinearConv", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const double offset = *DataAs<T>(y_zero);
      T* y = MutableDataAs<T>(out);
      for (size_t i = 0; i < result.size(); ++i) {
        const int64_t map = static_cast<int64_t>(i) / plane % maps;
        const float multiplier =
            x_scale * DataAs<float>(w_scale)[w_scales == 1 ? 0 : map] / y_scale;
        const double acc = result[i] + (bias ? bias[map] : 0);
        const double v = std::nearbyint(acc * multiplier) + offset;
        y[i] = static_cast<T>(
            std::clamp<double>(v, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
      }
    });
  }

  bool qlinear_;
  size_t w_input_;
  Dims x_dims_;
  Dims w_dims_;
  std::unique_ptr<ConvKernel> conv_;
};

using ConvTypes = TypeList<float, double>;

std::optional<std::string> CheckAutoPad(const sdk::Node& node) {
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

}  // namespace

void RegisterConvOps(OpRegistry& r) {
  r.Add("Conv",
        {1, ClaimConv(FloatTypes{}),
         [](const sdk::Host& host, const sdk::Node& node, std::span<const nxrt_shape> inputs,
            int64_t) { return std::make_unique<ConvKernel>(host, node, inputs); }});
  // ONNX Runtime's contrib op, which the host also fuses a Conv and its Relu
  // into: the activation runs on the convolution's result before it is
  // stored.
  r.Add("FusedConv",
        {1,
         [](const sdk::Node& node, int64_t opset, std::span<const nxrt_value_info> inputs) {
           const std::string activation = node.AttrString("activation", "");
           if (activation != "Relu") {
             return sdk::ClaimResult::Declined("FusedConv: activation '" + activation +
                                               "' not implemented (Relu is)");
           }
           if (inputs.size() > 3 && inputs[3].kind != NXRT_VALUE_NONE) {
             return sdk::ClaimResult::Declined("FusedConv: the Z input (a sum) not implemented");
           }
           return ClaimConv(FloatTypes{})(node, opset, inputs);
         },
         [](const sdk::Host& host, const sdk::Node& node, std::span<const nxrt_shape> inputs,
            int64_t) { return std::make_unique<ConvKernel>(host, node, inputs); }},
        "com.microsoft");
  r.Add("ConvInteger",
        {10, ClaimConv(TypeList<int8_t, uint8_t>{}),
         [](const sdk::Host& host, const sdk::Node& node, std::span<const nxrt_shape> inputs,
            int64_t) { return std::make_unique<ConvIntegerKernel>(host, node, inputs, false); }});
  r.Add("QLinearConv",
        {10,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           using Int8Types = TypeList<int8_t, uint8_t>;
           std::optional<std::string> reason = CheckAutoPad(node);
           if (!reason) reason = CheckInputDtype(node, inputs, 0, Int8Types{});
           if (!reason) reason = CheckInputDtype(node, inputs, 3, Int8Types{});
           if (!reason) reason = CheckInputDtype(node, inputs, 1, TypeList<float>{});
           return ClaimUnless(reason);
         },
         [](const sdk::Host& host, const sdk::Node& node, std::span<const nxrt_shape> inputs,
            int64_t) { return std::make_unique<ConvIntegerKernel>(host, node, inputs, true); }});
  r.Add("ConvTranspose", {1, ClaimConv(ConvTypes{}),
                          [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
                            return std::make_unique<ConvTransposeKernel>(node, inputs);
                          }});
}

}  // namespace nxrt::cpu
