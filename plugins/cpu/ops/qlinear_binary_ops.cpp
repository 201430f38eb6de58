// ONNX Runtime's com.microsoft QLinearAdd and QLinearMul: the sum or
// product of two 8-bit tensors, numpy-broadcast, requantised in one pass:
//   C = quantize(dequantize(A) op dequantize(B))
// computed as ONNX Runtime's kernels do, with the scales folded into
// multipliers of C's scale (quantized/qlinear_rows.hpp; a multiply where the
// QDQ form divides), so results are within one step of that form's
// (partitioner/qdq_fusion.hpp fuses it into these ops) and of ONNX
// Runtime's. A, B and C share one
// dtype, uint8 or int8; scales and zero points are per tensor.
#include <string>

#include "attention/kernel_support.hpp"
#include "broadcast.hpp"
#include "cpu_kernel.hpp"
#include "quantized/qlinear_rows.hpp"

namespace nxrt::cpu {
namespace {

using Int8Types = TypeList<uint8_t, int8_t>;

enum Input : size_t { kA, kAScale, kAZero, kB, kBScale, kBZero, kCScale, kCZero };

template <QLinearOp kOp>
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
      const float a_zero = zero(kAZero), b_zero = zero(kBZero);
      const float a_ratio = a_scale / c_scale, b_ratio = b_scale / c_scale;
      const QLinearScales scales{a_zero,
                                 b_zero,
                                 zero(kCZero),
                                 a_ratio,
                                 b_ratio,
                                 -(a_ratio * a_zero + b_ratio * b_zero),
                                 a_scale * b_scale / c_scale};
      const T* a = DataAs<T>(inputs[kA].tensor);
      const T* b = DataAs<T>(inputs[kB].tensor);
      T* y = MutableDataAs<T>(c);
      const int64_t sa = plan_.inner_strides[0], sb = plan_.inner_strides[1];
      ForEachRow(plan_, [&](const std::array<int64_t, 2>& offsets, int64_t o, int64_t n) {
        if (sa <= 1 && sb <= 1) {
          QLinearRow(kOp, scales, a + offsets[0], sa, b + offsets[1], sb, n, y + o);
          return;
        }
        // Other strides, element by element.
        for (int64_t i = 0; i < n; ++i) {
          QLinearRow(kOp, scales, a + offsets[0] + i * sa, 0, b + offsets[1] + i * sb, 0, 1,
                     y + o + i);
        }
      });
    });
  }

 private:
  std::string name_;
  nxrt_dtype dtype_;
  BroadcastPlan<2> plan_;
};

template <QLinearOp kOp>
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
            return std::make_unique<QLinearBinaryKernel<kOp>>(node, shapes);
          }};
}

}  // namespace

void RegisterQLinearBinaryOps(OpRegistry& r) {
  r.Add("QLinearAdd", QLinearBinary<QLinearOp::kAdd>(), "com.microsoft");
  r.Add("QLinearMul", QLinearBinary<QLinearOp::kMul>(), "com.microsoft");
}

}  // namespace nxrt::cpu
