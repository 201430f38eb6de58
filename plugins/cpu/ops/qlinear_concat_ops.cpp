// ONNX Runtime's com.microsoft QLinearConcat: Concat of 8-bit tensors each
// with its own scale and zero point, into Y's. Inputs: Y_scale,
// Y_zero_point, then (X, X_scale, X_zero_point) per operand. An operand
// quantized as Y is copied; any other is requantised through a table of its
// 256 values (quantized/byte_table.hpp), as ONNX Runtime does.
#include <cstring>
#include <string>
#include <vector>

#include "attention/kernel_support.hpp"
#include "cpu_kernel.hpp"
#include "quantized/byte_table.hpp"

namespace nxrt::cpu {
namespace {

using Int8Types = TypeList<uint8_t, int8_t>;

constexpr size_t kYScale = 0, kYZero = 1, kFirstX = 2;

class QLinearConcatKernel : public CpuKernel {
 public:
  QLinearConcatKernel(const sdk::Node& node, std::span<const nxrt_shape> shapes)
      : CpuKernel(true), name_(NodeText(node)), dtype_(shapes[kFirstX].dtype) {
    if (shapes.size() < kFirstX + 3 || (shapes.size() - kFirstX) % 3 != 0) {
      FailInvalid(name_ +
                  ": inputs must be Y_scale, Y_zero_point, then X, scale, zero point "
                  "triples");
    }
    const size_t operands = (shapes.size() - kFirstX) / 3;
    const nxrt_shape& first = shapes[kFirstX];
    out_dims_.assign(first.dims, first.dims + first.rank);
    const int64_t axis =
        NormalizeAxis(node.AttrInt("axis", 0), static_cast<int64_t>(out_dims_.size()), name_);
    out_dims_[axis] = 0;
    for (size_t k = 0; k < operands; ++k) {
      const nxrt_shape& x = shapes[kFirstX + 3 * k];
      if (x.dtype != dtype_ || x.rank != first.rank) {
        FailInvalid(name_ + ": operand " + std::to_string(k) +
                    " differs from operand 0 in dtype or rank; "
                    "make the operands alike");
      }
      for (size_t d = 0; d < x.rank; ++d) {
        if (static_cast<int64_t>(d) != axis && x.dims[d] != first.dims[d]) {
          FailInvalid(name_ + ": operand " + std::to_string(k) +
                      " differs from operand 0 off the axis; "
                      "make those dims equal");
        }
      }
      RequireElements(shapes, kFirstX + 3 * k + 1, 1, name_, "X_scale, one value");
      RequireElements(shapes, kFirstX + 3 * k + 2, 1, name_, "X_zero_point, one value");
      out_dims_[axis] += x.dims[axis];
    }
    RequireElements(shapes, kYScale, 1, name_, "Y_scale, one value");
    RequireElements(shapes, kYZero, 1, name_, "Y_zero_point, one value");
    outer_ = 1;
    for (int64_t d = 0; d < axis; ++d) outer_ *= out_dims_[d];
    int64_t inner = 1;
    for (size_t d = axis + 1; d < out_dims_.size(); ++d) inner *= out_dims_[d];
    operands_.resize(operands);
    for (size_t k = 0; k < operands; ++k) {
      operands_[k].block = shapes[kFirstX + 3 * k].dims[axis] * inner;
    }
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& y = PrepareOutput(ctx, outputs, 0, dtype_, out_dims_);
    Dispatch(Int8Types{}, dtype_, "QLinearConcat", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto value = [&](size_t i) {
        return IsPresent(inputs, i) ? static_cast<float>(*DataAs<T>(inputs[i].tensor)) : 0.0f;
      };
      const float y_scale = *DataAs<float>(inputs[kYScale].tensor), y_zero = value(kYZero);
      for (size_t k = 0; k < operands_.size(); ++k) {
        Operand& o = operands_[k];
        const size_t at = kFirstX + 3 * k;
        const ByteQuantization q{*DataAs<float>(inputs[at + 1].tensor), value(at + 2), y_scale,
                                 y_zero};
        o.copied = q.x_scale == y_scale && q.x_zero == y_zero;
        if (!o.copied) o.table.Update<T>(q, [](float v) { return v; });
      }
      uint8_t* out = static_cast<uint8_t*>(y.data);
      for (int64_t outer = 0; outer < outer_; ++outer) {
        for (size_t k = 0; k < operands_.size(); ++k) {
          const Operand& o = operands_[k];
          const uint8_t* x =
              static_cast<const uint8_t*>(inputs[kFirstX + 3 * k].tensor.data) + outer * o.block;
          if (o.copied) {
            std::memcpy(out, x, static_cast<size_t>(o.block));
          } else {
            o.table.Apply(x, o.block, out);
          }
          out += o.block;
        }
      }
    });
  }

 private:
  struct Operand {
    int64_t block = 0;  // elements per outer index
    bool copied = false;
    ByteTable table;
  };

  std::string name_;
  nxrt_dtype dtype_;
  Dims out_dims_;
  int64_t outer_ = 1;
  std::vector<Operand> operands_;
};

}  // namespace

void RegisterQLinearConcatOps(OpRegistry& r) {
  r.Add("QLinearConcat",
        {1, ClaimInputDtype(Int8Types{}, kFirstX),
         [](const sdk::Node& node, std::span<const nxrt_shape> shapes, int64_t) {
           return std::make_unique<QLinearConcatKernel>(node, shapes);
         }},
        "com.microsoft");
}

}  // namespace nxrt::cpu
