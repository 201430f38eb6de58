// ONNX Runtime's com.microsoft QLinearAdd and QLinearMul: the sum or
// product of two 8-bit tensors, numpy-broadcast, requantised in one pass:
//   C = quantize(dequantize(A) op dequantize(B))
// each step in float32 exactly as DequantizeLinear, Add or Mul and
// QuantizeLinear compute it, so the op gives the bits of the QDQ form
// ONNX Runtime's quantizers write (partitioner/qdq_fusion.hpp fuses that
// form into it), within one step of ONNX Runtime's own kernels. A, B and C
// share one dtype, uint8 or int8; scales and zero points are per tensor.
#include <string>

#include "attention/kernel_support.hpp"
#include "broadcast.hpp"
#include "cpu_kernel.hpp"
#include "quantized/saturating_round.hpp"

namespace nxrt::cpu {
namespace {

using Int8Types = TypeList<uint8_t, int8_t>;

enum Input : size_t { kA, kAScale, kAZero, kB, kBScale, kBZero, kCScale, kCZero };

struct Add {
  float operator()(float a, float b) const { return a + b; }
};
struct Mul {
  float operator()(float a, float b) const { return a * b; }
};

// One row: a and b step by their strides (0 for a broadcast operand).
template <typename T, typename Op>
void QuantizedRow(const T* __restrict a, int64_t a_stride, float a_scale, float a_zero,
                  const T* __restrict b, int64_t b_stride, float b_scale, float b_zero,
                  float c_scale, float c_zero, int64_t n, T* __restrict c) {
  const Op op;
  for (int64_t i = 0; i < n; ++i) {
    const float x = (static_cast<float>(a[i * a_stride]) - a_zero) * a_scale;
    const float y = (static_cast<float>(b[i * b_stride]) - b_zero) * b_scale;
    c[i] = SaturatingRound<T>(op(x, y) / c_scale, c_zero);
  }
}

template <typename Op>
class QLinearBinaryKernel : public CpuKernel {
 public:
  QLinearBinaryKernel(const sdk::Node& node, std::span<const nxrt_shape> shapes)
      : CpuKernel(true), name_(NodeText(node)), dtype_(shapes[kA].dtype) {
    for (size_t i : {kAScale, kAZero, kBScale, kBZero, kCScale, kCZero}) {
      RequireElements(shapes, i, 1, name_, "a scale or zero point per tensor");
    }
    const Dims a(shapes[kA].dims, shapes[kA].dims + shapes[kA].rank);
    const Dims b(shapes[kB].dims, shapes[kB].dims + shapes[kB].rank);
    plan_ = MakeBroadcastPlan<2>({a, b}, name_);
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& c = PrepareOutput(ctx, outputs, 0, dtype_, plan_.out_dims);
    Dispatch(Int8Types{}, dtype_, "QLinearBinary", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto zero = [&](size_t i) {
        return IsPresent(inputs, i) ? static_cast<float>(*DataAs<T>(inputs[i].tensor)) : 0.0f;
      };
      const float a_scale = *DataAs<float>(inputs[kAScale].tensor);
      const float b_scale = *DataAs<float>(inputs[kBScale].tensor);
      const float c_scale = *DataAs<float>(inputs[kCScale].tensor);
      const float a_zero = zero(kAZero), b_zero = zero(kBZero), c_zero = zero(kCZero);
      const T* a = DataAs<T>(inputs[kA].tensor);
      const T* b = DataAs<T>(inputs[kB].tensor);
      T* y = MutableDataAs<T>(c);
      const int64_t sa = plan_.inner_strides[0], sb = plan_.inner_strides[1];
      ForEachRow(plan_, [&](const std::array<int64_t, 2>& offsets, int64_t o, int64_t n) {
        QuantizedRow<T, Op>(a + offsets[0], sa, a_scale, a_zero, b + offsets[1], sb, b_scale,
                            b_zero, c_scale, c_zero, n, y + o);
      });
    });
  }

 private:
  std::string name_;
  nxrt_dtype dtype_;
  BroadcastPlan<2> plan_;
};

template <typename Op>
OpDefinition QLinearBinary() {
  return {1,
          [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
            std::optional<std::string> reason = CheckInputDtype(node, inputs, kA, Int8Types{});
            if (!reason) reason = CheckInputDtype(node, inputs, kB, Int8Types{});
            if (!reason && inputs[kA].dtype != inputs[kB].dtype) {
              reason = std::string(node.op_type()) + ": A and B of different dtypes";
            }
            for (size_t i : {kAScale, kBScale, kCScale}) {
              if (!reason) reason = CheckInputDtype(node, inputs, i, TypeList<float>{});
            }
            return ClaimUnless(reason);
          },
          [](const sdk::Node& node, std::span<const nxrt_shape> shapes, int64_t) {
            return std::make_unique<QLinearBinaryKernel<Op>>(node, shapes);
          }};
}

}  // namespace

void RegisterQLinearBinaryOps(OpRegistry& r) {
  r.Add("QLinearAdd", QLinearBinary<Add>(), "com.microsoft");
  r.Add("QLinearMul", QLinearBinary<Mul>(), "com.microsoft");
}

}  // namespace nxrt::cpu
