// Signal processing: DFT (opset 17 with the axis as an attribute, 20 with it
// as an input; forward, inverse, one-sided and its inverse, the real-output
// irfft), STFT, the Hann, Hamming and Blackman windows, and MelWeightMatrix.
// Complex tensors are real tensors with a trailing axis of 2 (real,
// imaginary); real signals have a trailing axis of 1. Transforms run in
// double through signal/fft.hpp for float32 and double tensors.
#include <cmath>
#include <complex>
#include <numbers>

#include "cpu_kernel.hpp"
#include "signal/fft.hpp"

namespace nxrt::cpu {
namespace {

using SignalTypes = TypeList<float, double>;
using Complex = std::complex<double>;

int64_t ScalarInput(std::span<const nxrt_value> inputs, size_t index, const std::string& what) {
  const std::vector<int64_t> values = ReadInt64s(inputs[index].tensor);
  if (values.size() != 1) FailInvalid(what + " must hold one value");
  return values[0];
}

class DftKernel : public CpuKernel {
 public:
  DftKernel(int64_t opset, int64_t axis, bool inverse, bool onesided)
      : CpuKernel(false), opset_(opset), axis_(axis), inverse_(inverse), onesided_(onesided) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const Dims dims = DimsOf(x);
    const auto rank = static_cast<int64_t>(dims.size());
    if (rank < 2 || (dims.back() != 1 && dims.back() != 2)) {
      FailInvalid("DFT: the input must end in an axis of 1 (real) or 2 (complex)");
    }
    int64_t axis = axis_;
    if (opset_ >= 20) axis = IsPresent(inputs, 2) ? ScalarInput(inputs, 2, "DFT: axis") : -2;
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank - 2) {
      FailInvalid("DFT: axis " + std::to_string(axis) + " is not a signal axis of " +
                  DimsText(dims));
    }
    // One-sided inverse is the inverse of a real signal's transform: it
    // takes n/2+1 bins and gives n real samples.
    const bool real_inverse = inverse_ && onesided_;
    const int64_t in_length = dims[axis];
    int64_t length = real_inverse ? 2 * (in_length - 1) : in_length;
    if (IsPresent(inputs, 1)) length = ScalarInput(inputs, 1, "DFT: dft_length");
    if (length < 1) FailInvalid("DFT: the transform length must be positive");
    const int64_t out_length = real_inverse ? length : onesided_ ? length / 2 + 1 : length;
    Dims out_dims = dims;
    out_dims[axis] = out_length;
    out_dims.back() = real_inverse ? 1 : 2;
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, x.dtype, out_dims);

    int64_t outer = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= dims[i];
    int64_t inner = 1;
    for (int64_t i = axis + 1; i < rank - 1; ++i) inner *= dims[i];
    const int64_t in_parts = dims.back();
    const int64_t out_parts = out_dims.back();
    const Fft fft(length);
    std::vector<Complex> line(length);
    const double scale = inverse_ ? 1.0 / static_cast<double>(length) : 1.0;
    Dispatch(SignalTypes{}, x.dtype, "DFT", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = DataAs<T>(x);
      T* dst = MutableDataAs<T>(out);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          auto at = [&](int64_t k) {
            const T* p = src + ((o * in_length + k) * inner + i) * in_parts;
            return Complex(p[0], in_parts == 2 ? static_cast<double>(p[1]) : 0.0);
          };
          std::fill(line.begin(), line.end(), Complex(0.0, 0.0));
          if (real_inverse) {
            const int64_t bins = std::min(in_length, length / 2 + 1);
            for (int64_t k = 0; k < bins; ++k) line[k] = at(k);
            for (int64_t k = 1; k < length - k; ++k) line[length - k] = std::conj(line[k]);
          } else {
            for (int64_t k = 0; k < std::min(in_length, length); ++k) line[k] = at(k);
          }
          fft.Transform(line.data(), inverse_);
          for (int64_t k = 0; k < out_length; ++k) {
            T* p = dst + ((o * out_length + k) * inner + i) * out_parts;
            p[0] = static_cast<T>(line[k].real() * scale);
            if (out_parts == 2) p[1] = static_cast<T>(line[k].imag() * scale);
          }
        }
      }
    });
  }

 private:
  int64_t opset_;
  int64_t axis_;  // the attribute, before opset 20
  bool inverse_;
  bool onesided_;
};

class StftKernel : public CpuKernel {
 public:
  explicit StftKernel(bool onesided) : CpuKernel(false), onesided_(onesided) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& signal = inputs[0].tensor;
    const Dims dims = DimsOf(signal);
    if (dims.size() != 3 || (dims[2] != 1 && dims[2] != 2)) {
      FailInvalid("STFT: the signal must be [batch, length, 1 or 2], got " + DimsText(dims));
    }
    const int64_t step = ScalarInput(inputs, 1, "STFT: frame_step");
    const bool has_window = IsPresent(inputs, 2);
    int64_t frame_length = has_window ? ElementCount(inputs[2].tensor) : 0;
    if (IsPresent(inputs, 3)) {
      frame_length = ScalarInput(inputs, 3, "STFT: frame_length");
      if (has_window && ElementCount(inputs[2].tensor) != frame_length) {
        FailInvalid("STFT: the window length differs from frame_length");
      }
    }
    if (frame_length < 1 || step < 1 || frame_length > dims[1]) {
      FailInvalid(
          "STFT: needs a frame_length (or window) of 1 to the signal length and a "
          "positive frame_step");
    }
    const int64_t frames = (dims[1] - frame_length) / step + 1;
    const int64_t bins = onesided_ ? frame_length / 2 + 1 : frame_length;
    const Dims out_dims{dims[0], frames, bins, 2};
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, signal.dtype, out_dims);
    const Fft fft(frame_length);
    std::vector<Complex> line(frame_length);
    const int64_t parts = dims[2];
    Dispatch(SignalTypes{}, signal.dtype, "STFT", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = DataAs<T>(signal);
      const T* window = has_window ? DataAs<T>(inputs[2].tensor) : nullptr;
      T* dst = MutableDataAs<T>(out);
      for (int64_t b = 0; b < dims[0]; ++b) {
        for (int64_t f = 0; f < frames; ++f) {
          for (int64_t k = 0; k < frame_length; ++k) {
            const T* p = src + (b * dims[1] + f * step + k) * parts;
            const double w = window ? static_cast<double>(window[k]) : 1.0;
            line[k] = Complex(p[0], parts == 2 ? static_cast<double>(p[1]) : 0.0) * w;
          }
          fft.Transform(line.data(), false);
          T* q = dst + (b * frames + f) * bins * 2;
          for (int64_t k = 0; k < bins; ++k) {
            q[2 * k] = static_cast<T>(line[k].real());
            q[2 * k + 1] = static_cast<T>(line[k].imag());
          }
        }
      }
    });
  }

 private:
  bool onesided_;
};

// A generalised cosine window a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N).
struct CosineWindow {
  double a0, a1, a2;
};

// Writes value(i), computed in double, to each element of `out` in its
// dtype. The generators ask the host for their output first and fill it in
// place: a size the session cannot hold is refused before any work, and no
// double-precision copy of the output is ever held.
template <typename Value>
void FillValues(nxrt_tensor& out, nxrt_dtype dtype, const char* op, Value value) {
  Dispatch(NumericTypes{}, dtype, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = MutableDataAs<T>(out);
    const int64_t count = ElementCount(out);
    for (int64_t i = 0; i < count; ++i) {
      dst[i] = static_cast<T>(static_cast<ComputeType<T>>(value(i)));
    }
  });
}

class WindowKernel : public CpuKernel {
 public:
  WindowKernel(CosineWindow window, bool periodic, nxrt_dtype dtype)
      : CpuKernel(false), window_(window), periodic_(periodic), dtype_(dtype) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const int64_t size = ScalarInput(inputs, 0, "window size");
    if (size < 0) FailInvalid("window size must not be negative");
    // A symmetric window of one sample has no period; it is the single peak.
    const int64_t period = periodic_ ? size : size - 1;
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, Dims{size});
    FillValues(out, dtype_, "window", [&](int64_t n) {
      if (period <= 0) return 1.0;
      const double phase =
          2.0 * std::numbers::pi * static_cast<double>(n) / static_cast<double>(period);
      return window_.a0 - window_.a1 * std::cos(phase) + window_.a2 * std::cos(2.0 * phase);
    });
  }

 private:
  CosineWindow window_;
  bool periodic_;
  nxrt_dtype dtype_;
};

// Triangular filters spaced evenly on the mel scale, each a column over the
// dft_length/2+1 spectrogram bins, with the bin edges floored as the ONNX
// definition does.
class MelWeightMatrixKernel : public CpuKernel {
 public:
  explicit MelWeightMatrixKernel(nxrt_dtype dtype) : CpuKernel(false), dtype_(dtype) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const int64_t mel_bins = ScalarInput(inputs, 0, "MelWeightMatrix: num_mel_bins");
    const int64_t dft_length = ScalarInput(inputs, 1, "MelWeightMatrix: dft_length");
    const int64_t sample_rate = ScalarInput(inputs, 2, "MelWeightMatrix: sample_rate");
    const double lower = ReadScalar(inputs[3].tensor);
    const double upper = ReadScalar(inputs[4].tensor);
    if (mel_bins < 1 || dft_length < 1 || sample_rate < 1) {
      FailInvalid("MelWeightMatrix: num_mel_bins, dft_length and sample_rate must be positive");
    }
    const int64_t spectrogram_bins = dft_length / 2 + 1;
    auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
    const double low_mel = to_mel(lower);
    const double mel_step = (to_mel(upper) - low_mel) / static_cast<double>(mel_bins + 2);
    // The output first: its allocation is bounded by the session's memory
    // limit, and the edges are no larger than its rows.
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, Dims{spectrogram_bins, mel_bins});
    std::vector<int64_t> edges(mel_bins + 2);
    for (int64_t i = 0; i < mel_bins + 2; ++i) {
      const double hz =
          700.0 * (std::pow(10.0, (static_cast<double>(i) * mel_step + low_mel) / 2595.0) - 1.0);
      edges[i] = SaturatingCast<int64_t>(
          std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate)));
      if (edges[i] < 0 || edges[i] >= spectrogram_bins) {
        FailInvalid("MelWeightMatrix: the edge frequencies fall outside the spectrogram bins");
      }
    }
    // Filter m rises from its left edge to 1 at its center and falls to its
    // right edge (exclusive); a filter whose edges meet is 1 at the center.
    FillValues(out, dtype_, "MelWeightMatrix", [&](int64_t i) {
      const int64_t bin = i / mel_bins;
      const int64_t m = i % mel_bins;
      const int64_t left = edges[m];
      const int64_t center = edges[m + 1];
      const int64_t right = edges[m + 2];
      if (bin >= center && bin < right) {
        return static_cast<double>(right - bin) / static_cast<double>(right - center);
      }
      if (bin == center) return 1.0;
      if (bin >= left && bin < center) {
        return static_cast<double>(bin - left) / static_cast<double>(center - left);
      }
      return 0.0;
    });
  }

 private:
  nxrt_dtype dtype_;
};

// The output_datatype attribute (default float32) as a dtype, declining the
// ones the kernels do not write.
std::optional<std::string> CheckOutputDatatype(const sdk::Node& node) {
  const auto dtype = AttrDtype(node, "output_datatype", NXRT_DTYPE_FLOAT32);
  if (!Contains(NumericTypes{}, dtype)) {
    return std::string(node.op_type()) + ": output_datatype " + DtypeName(dtype) + " not supported";
  }
  return std::nullopt;
}

nxrt_dtype OutputDatatype(const sdk::Node& node) {
  return AttrDtype(node, "output_datatype", NXRT_DTYPE_FLOAT32);
}

void AddWindow(OpRegistry& r, const char* op, CosineWindow window) {
  r.Add(op, {17,
             [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
               if (auto reason = CheckOutputDatatype(node)) return ClaimUnless(reason);
               return ClaimUnless(CheckInputDtype(node, inputs, 0, IndexTypes{}));
             },
             [window](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
               return std::make_unique<WindowKernel>(window, node.AttrInt("periodic", 1) != 0,
                                                     OutputDatatype(node));
             }});
}

}  // namespace

void RegisterSignalOps(OpRegistry& r) {
  r.Add("DFT", {17,
                [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
                  return ClaimUnless(CheckInputDtype(node, inputs, 0, SignalTypes{}));
                },
                [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t opset) {
                  return std::make_unique<DftKernel>(opset, node.AttrInt("axis", 1),
                                                     node.AttrInt("inverse", 0) != 0,
                                                     node.AttrInt("onesided", 0) != 0);
                }});
  r.Add("STFT", {17,
                 [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
                   return ClaimUnless(CheckInputDtype(node, inputs, 0, SignalTypes{}));
                 },
                 [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
                   return std::make_unique<StftKernel>(node.AttrInt("onesided", 1) != 0);
                 }});
  AddWindow(r, "HannWindow", {0.5, 0.5, 0.0});
  AddWindow(r, "HammingWindow", {25.0 / 46.0, 21.0 / 46.0, 0.0});
  AddWindow(r, "BlackmanWindow", {0.42, 0.5, 0.08});
  r.Add("MelWeightMatrix",
        {17,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           if (auto reason = CheckOutputDatatype(node)) return ClaimUnless(reason);
           return ClaimUnless(CheckInputDtype(node, inputs, 0, IndexTypes{}));
         },
         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
           return std::make_unique<MelWeightMatrixKernel>(OutputDatatype(node));
         }});
}

}  // namespace nxrt::cpu
