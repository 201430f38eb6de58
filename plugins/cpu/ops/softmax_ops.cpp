// Softmax, LogSoftmax and Hardmax. Before opset 13 the input is coerced to
// 2-D at `axis` (default 1) and normalised over each row; from opset 13 it is
// normalised along `axis` alone (default -1). Both reduce to rows of length
// n with a stride of `inner` between their elements. Softmax and LogSoftmax
// in float run on oneDNN (onednn/plain_primitive.hpp), planned for the kernel's
// shape.
#include <cmath>
#include <limits>
#include <optional>

#include "cpu_kernel.hpp"
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
    const auto [outer, n, inner] = ViewRows(dims, axis_, coerce_2d_);
    if (ElementCount(dims) == 0) return;
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
                 if (kind != SoftmaxKind::kHardmax && inputs[0].dtype == NXRT_DTYPE_FLOAT32 &&
                     ElementCount(dims) > 0) {
                   const RowView view = ViewRows(dims, axis, coerce);
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
