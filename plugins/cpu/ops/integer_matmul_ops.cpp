// MatMulInteger, QLinearMatMul and com.microsoft MatMulIntegerToFloat:
// (A - a_zero) x (B - b_zero) of 8-bit integers, exactly in int32
// (quantized/integer_product.hpp, on oneDNN's integer kernels).
// MatMulInteger returns the sums; QLinearMatMul rescales them by
// a_scale * b_scale / y_scale (worked out in the scales' dtype, as ONNX
// Runtime does), rounds half to even, adds y_zero and saturates;
// MatMulIntegerToFloat returns float(sum) * (a_scale * b_scale) + bias, the
// float steps of the Cast, Mul and Add that ONNX Runtime's dynamic quantizer
// writes after a MatMulInteger (partitioner/integer_matmul_fusion.hpp).
// A has any rank; B is 2-D, or has A's rank and leading dims. Zero points
// per tensor, a's also per row (MatMulInteger), b's also per column; scales
// per tensor, b's also per column. A constant 2-D B is prepared once and
// shared between the node's shape variants.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "attention/kernel_support.hpp"
#include "cpu_kernel.hpp"
#include "quantized/integer_product.hpp"
#include "quantized/saturating_round.hpp"

namespace nxrt::cpu {
namespace {

using Int8Types = TypeList<int8_t, uint8_t>;

// Where each op keeps its operands.
struct Operands {
  size_t a, a_zero, b, b_zero;
};
constexpr Operands kMatMulInteger{0, 2, 1, 3};
constexpr Operands kQLinearMatMul{0, 2, 3, 5};
constexpr Operands kMatMulIntegerToFloat{0, 4, 1, 5};

// The values of a uint8 or int8 tensor, widened.
void Widened(const nxrt_tensor& t, std::vector<int32_t>& out) {
  out.resize(ElementCount(t));
  if (t.dtype == NXRT_DTYPE_UINT8) {
    Widen(DataAs<uint8_t>(t), out.size(), out.data());
  } else {
    Widen(DataAs<int8_t>(t), out.size(), out.data());
  }
}

class IntegerMatMulKernel : public CpuKernel {
 public:
  IntegerMatMulKernel(const sdk::Node& node, std::span<const nxrt_shape> shapes, Operands operands)
      : CpuKernel(false), name_(NodeText(node)), operands_(operands) {
    const nxrt_shape& a = shapes[operands.a];
    const nxrt_shape& b = shapes[operands.b];
    a_dims_.assign(a.dims, a.dims + a.rank);
    b_dims_.assign(b.dims, b.dims + b.rank);
    if (a.rank < 1 || b.rank < 2) Fail("A must have a rank and B be 2-D or more; reshape them");
    k_ = b_dims_[b.rank - 2];
    n_ = b_dims_[b.rank - 1];
    if (a_dims_.back() != k_) {
      Fail("A is " + DimsText(a_dims_) + " and B " + DimsText(b_dims_) +
           "; A's last dim must be B's K");
    }
    rows_ = a.rank == 1 ? 1 : a_dims_[a.rank - 2];
    batch_ = ElementCount(a_dims_) / std::max<int64_t>(rows_ * k_, 1);
    shared_b_ = b.rank == 2;
    if (!shared_b_ && (b.rank != a.rank || !std::equal(a.dims, a.dims + a.rank - 2, b.dims))) {
      Fail("B is " + DimsText(b_dims_) + "; it must be 2-D or have A's leading dims " +
           DimsText(a_dims_));
    }
    out_dims_ = a_dims_;
    out_dims_.back() = n_;
    if (rows_ > 0 && n_ > 0 && k_ > 0) product_.emplace(a.dtype, b.dtype, rows_, n_, k_);
  }

  void PrepareConstantInputs(std::span<const nxrt_constant_input> constants) override {
    for (const nxrt_constant_input& c : constants) {
      if (c.input_index == operands_.b && shared_b_ && product_) product_->PrepareB(c.bytes);
    }
  }
  std::shared_ptr<sdk::SharedState> ShareableConstantState() override {
    return product_ ? product_->prepared_b() : nullptr;
  }
  bool AdoptShareableConstantState(const std::shared_ptr<sdk::SharedState>& state) override {
    return shared_b_ && product_ && product_->AdoptB(state);
  }

 protected:
  [[noreturn]] void Fail(const std::string& what) const { FailInvalid(name_ + ": " + what); }

  const Dims& out_dims() const { return out_dims_; }
  int64_t columns() const { return n_; }

  // Reads and checks the call's zero points, which the products below use.
  void ReadZeroPoints(std::span<const nxrt_value> inputs) {
    ZeroPoints(inputs, operands_.a_zero, a_zero_, rows_, "a_zero_point", "row of A");
    ZeroPoints(inputs, operands_.b_zero, b_zero_, n_, "b_zero_point", "column of B");
  }

  // The sums requantised by `multipliers` (one per column) straight into
  // `y` of `y_dtype`, where the zero points allow; false otherwise.
  bool MultiplyRequantised(std::span<const nxrt_value> inputs,
                           const std::vector<float>& multipliers, nxrt_dtype y_dtype,
                           int32_t y_zero, void* y) {
    if (rows_ * n_ == 0 || k_ == 0 || a_zero_.size() != 1) return false;
    // The zero points are the same for every batch, so only the first can
    // decline.
    bool done = true;
    ForEachBatch(inputs, [&](int64_t i, const void* a, const void* b) {
      done = done && product_->RunRequantised(a, a_zero_[0], b, b_zero_, multipliers, y_dtype,
                                              y_zero, static_cast<uint8_t*>(y) + i * rows_ * n_);
    });
    return done;
  }

  // The int32 sums into `y` (out_dims() elements).
  void Multiply(std::span<const nxrt_value> inputs, int32_t* y) {
    const int64_t per_batch = rows_ * n_;
    if (per_batch == 0) return;
    if (k_ == 0) {
      std::fill(y, y + batch_ * per_batch, 0);
      return;
    }
    ForEachBatch(inputs, [&](int64_t i, const void* a, const void* b) {
      product_->Run(a, a_zero_, b, b_zero_, y + i * per_batch);
    });
  }

 private:
  // fn(i, a, b) for each batch i with its A and B.
  template <typename Fn>
  void ForEachBatch(std::span<const nxrt_value> inputs, Fn&& fn) {
    const uint8_t* a = DataAs<uint8_t>(inputs[operands_.a].tensor);
    const uint8_t* b = DataAs<uint8_t>(inputs[operands_.b].tensor);
    for (int64_t i = 0; i < batch_; ++i) {
      fn(i, a + i * rows_ * k_, b + (shared_b_ ? 0 : i * k_ * n_));
    }
  }

  // Input `index`'s zero points (0 when absent) into `out`: one, or
  // `per_slice` of them, one per `slice`.
  void ZeroPoints(std::span<const nxrt_value> inputs, size_t index, std::vector<int32_t>& out,
                  int64_t per_slice, const char* what, const char* slice) const {
    if (!IsPresent(inputs, index)) {
      out.assign(1, 0);
      return;
    }
    Widened(inputs[index].tensor, out);
    if (out.size() != 1 && static_cast<int64_t>(out.size()) != per_slice) {
      Fail(std::string(what) + " holds " + std::to_string(out.size()) +
           " values; give one, or one per " + slice + " (" + std::to_string(per_slice) + ")");
    }
  }

  std::string name_;
  Operands operands_;
  Dims a_dims_, b_dims_, out_dims_;
  int64_t k_ = 0, n_ = 0, rows_ = 0, batch_ = 0;
  bool shared_b_ = false;
  std::optional<IntegerProduct> product_;
  std::vector<int32_t> a_zero_, b_zero_;
};

class MatMulIntegerKernel : public IntegerMatMulKernel {
 public:
  MatMulIntegerKernel(const sdk::Node& node, std::span<const nxrt_shape> shapes)
      : IntegerMatMulKernel(node, shapes, kMatMulInteger) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& y = PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_INT32, out_dims());
    ReadZeroPoints(inputs);
    Multiply(inputs, MutableDataAs<int32_t>(y));
  }
};

class QLinearMatMulKernel : public IntegerMatMulKernel {
 public:
  QLinearMatMulKernel(const sdk::Node& node, std::span<const nxrt_shape> shapes)
      : IntegerMatMulKernel(node, shapes, kQLinearMatMul) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& y_zero = inputs[7].tensor;
    if (ElementCount(y_zero) != 1) Fail("y_zero_point must hold one value; fix its shape");
    Multipliers(inputs);
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, y_zero.dtype, out_dims());
    const int32_t zero_value = ByteValueAt(y_zero, 0);
    ReadZeroPoints(inputs);
    if (MultiplyRequantised(inputs, multipliers_, y_zero.dtype, zero_value, out.data)) return;
    sums_.resize(ElementCount(out_dims()));
    Multiply(inputs, sums_.data());
    const int64_t n = columns();
    Dispatch(Int8Types{}, y_zero.dtype, "QLinearMatMul", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const float zero = *DataAs<T>(y_zero);
      T* y = MutableDataAs<T>(out);
      for (size_t i = 0; i < sums_.size(); i += n) {
        RequantizeColumns(sums_.data() + i, multipliers_.data(), zero, n, y + i);
      }
    });
  }

 private:
  // a_scale * b_scale / y_scale per output column into multipliers_, each
  // step rounded to the scales' dtype.
  void Multipliers(std::span<const nxrt_value> inputs) {
    const nxrt_tensor& b_scale = inputs[4].tensor;
    const int64_t n = columns();
    if (ElementCount(inputs[1].tensor) != 1 || ElementCount(inputs[6].tensor) != 1 ||
        (ElementCount(b_scale) != 1 && ElementCount(b_scale) != n)) {
      Fail("a_scale and y_scale take one value, b_scale one or one per column of B (" +
           std::to_string(n) + "); fix the scales' shapes");
    }
    multipliers_.resize(n);
    Dispatch(TypeList<float, Float16, BFloat16>{}, b_scale.dtype, "QLinearMatMul", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const C a = static_cast<C>(*DataAs<T>(inputs[1].tensor));
      const C y = static_cast<C>(*DataAs<T>(inputs[6].tensor));
      for (int64_t j = 0; j < n; ++j) {
        const C b = static_cast<C>(DataAs<T>(b_scale)[ElementCount(b_scale) == 1 ? 0 : j]);
        const T product = static_cast<T>(a * b);
        multipliers_[j] = static_cast<float>(static_cast<T>(static_cast<C>(product) / y));
      }
    });
  }

  std::vector<float> multipliers_;
  std::vector<int32_t> sums_;
};

class MatMulIntegerToFloatKernel : public IntegerMatMulKernel {
 public:
  MatMulIntegerToFloatKernel(const sdk::Node& node, std::span<const nxrt_shape> shapes)
      : IntegerMatMulKernel(node, shapes, kMatMulIntegerToFloat) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    enum : size_t { kAScale = 2, kBScale = 3, kBias = 6 };
    const int64_t n = columns();
    const nxrt_tensor& a_scale = inputs[kAScale].tensor;
    const nxrt_tensor& b_scale = inputs[kBScale].tensor;
    const int64_t b_scales = ElementCount(b_scale);
    if (ElementCount(a_scale) != 1 || (b_scales != 1 && b_scales != n)) {
      Fail("a_scale takes one value, b_scale one or one per column of B (" + std::to_string(n) +
           "); fix the scales' shapes");
    }
    const bool bias = IsPresent(inputs, kBias);
    if (bias && ElementCount(inputs[kBias].tensor) != n) {
      Fail("bias needs one value per column of B (" + std::to_string(n) + "); fix its shape");
    }
    scales_.resize(n);
    for (int64_t j = 0; j < n; ++j) {
      scales_[j] = *DataAs<float>(a_scale) * DataAs<float>(b_scale)[b_scales == 1 ? 0 : j];
    }
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_FLOAT32, out_dims());
    ReadZeroPoints(inputs);
    sums_.resize(ElementCount(out_dims()));
    Multiply(inputs, sums_.data());
    float* y = MutableDataAs<float>(out);
    const float* b = bias ? DataAs<float>(inputs[kBias].tensor) : nullptr;
    for (size_t i = 0; i < sums_.size(); i += n) {
      ScaleRow(sums_.data() + i, scales_.data(), b, n, y + i);
    }
  }

 private:
  static void ScaleRow(const int32_t* __restrict sums, const float* __restrict scales,
                       const float* __restrict bias, int64_t n, float* __restrict y) {
    for (int64_t j = 0; j < n; ++j) y[j] = static_cast<float>(sums[j]) * scales[j];
    if (bias == nullptr) return;
    for (int64_t j = 0; j < n; ++j) y[j] += bias[j];
  }

  std::vector<float> scales_;
  std::vector<int32_t> sums_;
};

}  // namespace

void RegisterIntegerMatMulOps(OpRegistry& r) {
  r.Add("MatMulInteger",
        {10,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           if (auto reason = CheckInputDtype(node, inputs, 0, Int8Types{})) {
             return sdk::ClaimResult::Declined(*reason);
           }
           return ClaimUnless(CheckInputDtype(node, inputs, 1, Int8Types{}));
         },
         [](const sdk::Node& node, std::span<const nxrt_shape> shapes, int64_t) {
           return std::make_unique<MatMulIntegerKernel>(node, shapes);
         }});
  r.Add("QLinearMatMul",
        {10,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           if (auto reason = CheckInputDtype(node, inputs, 0, Int8Types{})) {
             return sdk::ClaimResult::Declined(*reason);
           }
           if (auto reason = CheckInputDtype(node, inputs, 3, Int8Types{})) {
             return sdk::ClaimResult::Declined(*reason);
           }
           return ClaimUnless(CheckInputDtype(node, inputs, 7, Int8Types{}));
         },
         [](const sdk::Node& node, std::span<const nxrt_shape> shapes, int64_t) {
           return std::make_unique<QLinearMatMulKernel>(node, shapes);
         }});
  r.Add("MatMulIntegerToFloat",
        {1,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           for (size_t i : {0, 1}) {
             if (auto reason = CheckInputDtype(node, inputs, i, Int8Types{})) {
               return sdk::ClaimResult::Declined(*reason);
             }
           }
           for (size_t i : {2, 3, 6}) {
             if (i >= inputs.size() || inputs[i].dtype == NXRT_DTYPE_UNDEFINED) continue;
             if (auto reason = CheckInputDtype(node, inputs, i, TypeList<float>{})) {
               return sdk::ClaimResult::Declined(*reason);
             }
           }
           return sdk::ClaimResult::Claimed();
         },
         [](const sdk::Node& node, std::span<const nxrt_shape> shapes, int64_t) {
           return std::make_unique<MatMulIntegerToFloatKernel>(node, shapes);
         }},
        "com.microsoft");
}

}  // namespace nxrt::cpu
