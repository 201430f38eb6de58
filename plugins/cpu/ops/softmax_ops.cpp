// Softmax, LogSoftmax and Hardmax. Before opset 13 the input is coerced to
// 2-D at `axis` (default 1) and normalised over each row; from opset 13 it is
// normalised along `axis` alone (default -1). Both reduce to rows of length
// n with a stride of `inner` between their elements. Float Softmax and
// LogSoftmax run on oneDNN (onednn/plain_primitive.hpp), planned for the
// kernel's shape, except a small Softmax over contiguous rows: a decoder
// step's attention scores, a little longer every step, where planning a
// primitive and generating its code for each new length (about 40 us) costs
// more than the rows themselves. Those run in one kernel for every shape,
// vectorised here.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "cpu_kernel.hpp"
#include "isa_clones.hpp"
#include "onednn/plain_primitive_kernel.hpp"
#include "vector_math.hpp"

namespace nxrt::cpu {
namespace {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

// v rounded to T's precision, in T's compute type (v itself when T is C).
template <typename T>
ComputeType<T> RoundedTo(ComputeType<T> v) {
  return static_cast<ComputeType<T>>(static_cast<T>(v));
}

// y = softmax(x) over a contiguous row of `count`, with sixteen independent
// lanes for the max and the sum (one running value is a dependent chain the
// vectoriser must keep in order). A row of -inf only gives NaN, as the
// spec's Sub, Exp, ReduceSum and Div do.
NXRT_ISA_CLONES void SoftmaxRow(const float* x, float* y, int64_t count) {
  constexpr int64_t kLanes = 16;
  const int64_t whole = count - count % kLanes;
  float lane[kLanes];
  std::fill(lane, lane + kLanes, -std::numeric_limits<float>::infinity());
  for (int64_t i = 0; i < whole; i += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) lane[l] = std::max(lane[l], x[i + l]);
  }
  float max = -std::numeric_limits<float>::infinity();
  for (int64_t i = whole; i < count; ++i) max = std::max(max, x[i]);
  for (int64_t l = 0; l < kLanes; ++l) max = std::max(max, lane[l]);
  std::fill(lane, lane + kLanes, 0.0f);
  for (int64_t i = 0; i < whole; i += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) {
      y[i + l] = ExpFloat(x[i + l] - max);
      lane[l] += y[i + l];
    }
  }
  float sum = 0.0f;
  for (int64_t i = whole; i < count; ++i) {
    y[i] = ExpFloat(x[i] - max);
    sum += y[i];
  }
  for (int64_t l = 0; l < kLanes; ++l) sum += lane[l];
  const float inverse = 1.0f / sum;
  for (int64_t i = 0; i < count; ++i) y[i] *= inverse;
}

// Up to this many elements a contiguous-row Softmax is computed here: the
// rows take a few microseconds at most, below what a plan of its own costs.
constexpr int64_t kRowSoftmaxElements = int64_t{1} << 15;

// The [outer, n, inner] view of `dims` normalised at `axis`.
struct RowView {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
};
RowView ViewRows(std::span<const int64_t> dims, int64_t axis_attribute, bool coerce_2d) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t axis = NormalizeAxis(axis_attribute, rank, "Softmax");
  RowView view;
  for (int64_t i = 0; i < axis; ++i) view.outer *= dims[i];
  for (int64_t i = axis; i < rank; ++i) {
    if (coerce_2d || i == axis) {
      view.n *= dims[i];
    } else {
      view.inner *= dims[i];
    }
  }
  return view;
}

class SoftmaxKernel : public CpuKernel {
 public:
  SoftmaxKernel(SoftmaxKind kind, nxrt_dtype dtype, int64_t axis, bool coerce_2d)
      : CpuKernel(true), kind_(kind), dtype_(dtype), axis_(axis), coerce_2d_(coerce_2d) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    const std::span<const int64_t> dims = DimsSpan(in);
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, dims);
    // Plain locals, not a structured binding: the lambdas below capture them.
    const RowView view = ViewRows(dims, axis_, coerce_2d_);
    const int64_t outer = view.outer, n = view.n, inner = view.inner;
    if (ElementCount(dims) == 0) return;
    if (kind_ == SoftmaxKind::kSoftmax && inner == 1 && dtype_ == NXRT_DTYPE_FLOAT32) {
      const float* x = DataAs<float>(in);
      float* y = MutableDataAs<float>(out);
      for (int64_t o = 0; o < outer; ++o) SoftmaxRow(x + o * n, y + o * n, n);
      return;
    }
    Dispatch(FloatTypes{}, dtype_, "Softmax", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const T* x = DataAs<T>(in);
      T* y = MutableDataAs<T>(out);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t j = 0; j < inner; ++j) {
          const T* row = x + o * n * inner + j;
          T* dst = y + o * n * inner + j;
          C max = -std::numeric_limits<C>::infinity();
          int64_t arg = 0;
          for (int64_t i = 0; i < n; ++i) {
            const C v = static_cast<C>(row[i * inner]);
            if (v > max) {
              max = v;
              arg = i;
            }
          }
          if (kind_ == SoftmaxKind::kHardmax) {
            for (int64_t i = 0; i < n; ++i) dst[i * inner] = static_cast<T>(C(i == arg ? 1 : 0));
            continue;
          }
          if (kind_ == SoftmaxKind::kSoftmax && inner == 1 && std::is_same_v<T, C>) {
            // A contiguous row in the compute type: one exp per element,
            // kept in the output and scaled once the sum is known.
            C sum = 0;
            for (int64_t i = 0; i < n; ++i) {
              const C e = math::Exp(static_cast<C>(row[i]) - max);
              dst[i] = static_cast<T>(e);
              sum += e;
            }
            const C scale = C(1) / sum;
            for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(static_cast<C>(dst[i]) * scale);
            continue;
          }
          // The spec defines both as Sub, Exp, ReduceSum then Div (Softmax)
          // or Log and Sub (LogSoftmax), each producing T: 16-bit floats
          // round every one of those intermediates to T.
          const auto shifted = [&](int64_t i) {
            return RoundedTo<T>(static_cast<C>(row[i * inner]) - max);
          };
          C sum = 0;
          for (int64_t i = 0; i < n; ++i) sum += RoundedTo<T>(math::Exp(shifted(i)));
          sum = RoundedTo<T>(sum);
          if (kind_ == SoftmaxKind::kLogSoftmax) {
            const C log_sum = RoundedTo<T>(std::log(sum));
            for (int64_t i = 0; i < n; ++i) dst[i * inner] = static_cast<T>(shifted(i) - log_sum);
          } else {
            for (int64_t i = 0; i < n; ++i) {
              dst[i * inner] = static_cast<T>(RoundedTo<T>(math::Exp(shifted(i))) / sum);
            }
          }
        }
      }
    });
  }

 private:
  SoftmaxKind kind_;
  nxrt_dtype dtype_;
  int64_t axis_;
  bool coerce_2d_;
};

void AddSoftmax(OpRegistry& r, const char* name, SoftmaxKind kind) {
  r.Add(name, {1, ClaimInputDtype(FloatTypes{}),
               [kind](const sdk::Node& node, std::span<const nxrt_shape> inputs,
                      int64_t opset) -> std::unique_ptr<CpuKernel> {
                 const bool coerce = opset < 13;
                 const int64_t axis = node.AttrInt("axis", coerce ? 1 : -1);
                 const std::span<const int64_t> dims(inputs[0].dims, inputs[0].rank);
                 const RowView view = ViewRows(dims, axis, coerce);
                 const bool rows = kind == SoftmaxKind::kSoftmax && view.inner == 1 &&
                                   ElementCount(dims) <= kRowSoftmaxElements;
                 if (kind != SoftmaxKind::kHardmax && !rows &&
                     inputs[0].dtype == NXRT_DTYPE_FLOAT32 && ElementCount(dims) > 0) {
                   if (auto softmax = onednn::PlanSoftmax(view.outer, view.n, view.inner,
                                                          kind == SoftmaxKind::kLogSoftmax)) {
                     return std::make_unique<PlainPrimitiveKernel>(std::move(*softmax),
                                                                   Dims(dims.begin(), dims.end()));
                   }
                 }
                 return std::make_unique<SoftmaxKernel>(kind, inputs[0].dtype, axis, coerce);
               }});
}

}  // namespace

void RegisterSoftmaxOps(OpRegistry& r) {
  AddSoftmax(r, "Softmax", SoftmaxKind::kSoftmax);
  AddSoftmax(r, "LogSoftmax", SoftmaxKind::kLogSoftmax);
  AddSoftmax(r, "Hardmax", SoftmaxKind::kHardmax);
}

}  // namespace nxrt::cpu
