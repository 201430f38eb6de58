// ONNX Runtime's com.microsoft QGemm, the Gemm its QOperator quantizer
// writes: acc = (A' - a_zero) x (B' - b_zero) + C in int32 (A' and B'
// transposed where asked, C an int32 bias broadcast to [M, N]), then
// scaled per column by alpha * a_scale * b_scale, and divided by y_scale
// and requantised when y_zero_point is given (float32 out otherwise), as
// ONNX Runtime's kernel computes it. The product is
// quantized/integer_product.hpp's; a constant B is prepared once, already
// transposed, and shared between shape variants.
#include <optional>
#include <string>
#include <vector>

#include "attention/kernel_support.hpp"
#include "cpu_kernel.hpp"
#include "quantized/byte_transpose.hpp"
#include "quantized/integer_product.hpp"
#include "quantized/saturating_round.hpp"

namespace nxrt::cpu {
namespace {

using Int8Types = TypeList<int8_t, uint8_t>;

enum Input : size_t { kA, kAScale, kAZero, kB, kBScale, kBZero, kC, kYScale, kYZero };

class QGemmKernel : public CpuKernel {
 public:
  QGemmKernel(const sdk::Node& node, std::span<const nxrt_shape> shapes)
      : CpuKernel(false),
        name_(NodeText(node)),
        trans_a_(node.AttrInt("transA", 0) != 0),
        trans_b_(node.AttrInt("transB", 0) != 0),
        alpha_(node.AttrFloat("alpha", 1.0f)),
        requantised_(kYZero < shapes.size() && shapes[kYZero].dtype != NXRT_DTYPE_UNDEFINED),
        y_dtype_(requantised_ ? shapes[kYZero].dtype : NXRT_DTYPE_FLOAT32) {
    const nxrt_shape& a = shapes[kA];
    const nxrt_shape& b = shapes[kB];
    if (a.rank != 2 || b.rank != 2) Fail("A and B must be 2-D; flatten them first");
    m_ = a.dims[trans_a_ ? 1 : 0];
    k_ = a.dims[trans_a_ ? 0 : 1];
    n_ = b.dims[trans_b_ ? 0 : 1];
    if (b.dims[trans_b_ ? 1 : 0] != k_) {
      Fail("A' is [" + std::to_string(m_) + ", " + std::to_string(k_) + "] and B " +
           DimsText(std::span<const int64_t>(b.dims, b.rank)) + "; their inner dims differ");
    }
    RequireElements(shapes, kAScale, 1, name_, "a_scale, one value");
    RequireElements(shapes, kAZero, 1, name_, "a_zero_point, one value");
    RequireElements(shapes, kYScale, 1, name_, "y_scale, one value");
    RequireElements(shapes, kYZero, 1, name_, "y_zero_point, one value");
    if (kC < shapes.size() && shapes[kC].dtype != NXRT_DTYPE_UNDEFINED) {
      const nxrt_shape& c = shapes[kC];
      const int64_t count = ElementCount(std::span<const int64_t>(c.dims, c.rank));
      // One value, a row [N] or [1, N], a column [M, 1], or all of [M, N].
      if (count == 1) {
        c_rows_ = c_cols_ = 0;
      } else if (count == n_ && (c.rank == 1 || c.dims[0] == 1)) {
        c_rows_ = 0;
      } else if (count == m_ && c.rank == 2 && c.dims[1] == 1) {
        c_rows_ = 1;
        c_cols_ = 0;
      } else if (c.rank == 2 && c.dims[0] == m_ && c.dims[1] == n_) {
        c_rows_ = n_;
      } else {
        Fail("C of " + DimsText(std::span<const int64_t>(c.dims, c.rank)) +
             " does not broadcast to [M, N]");
      }
    }
    if (m_ > 0 && n_ > 0 && k_ > 0) product_.emplace(a.dtype, b.dtype, m_, n_, k_);
  }

  void PrepareConstantInputs(std::span<const nxrt_constant_input> constants) override {
    for (const nxrt_constant_input& c : constants) {
      if (c.input_index == kB && product_) product_->PrepareB(BAsKByN(c.bytes));
    }
  }
  std::shared_ptr<sdk::SharedState> ShareableConstantState() override {
    return product_ ? product_->prepared_b() : nullptr;
  }
  bool AdoptShareableConstantState(const std::shared_ptr<sdk::SharedState>& state) override {
    return product_ && product_->AdoptB(state);
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& y = PrepareOutput(ctx, outputs, 0, y_dtype_, Dims{m_, n_});
    if (m_ == 0 || n_ == 0) return;
    Scales(inputs);
    const nxrt_tensor& b_zero = inputs[kBZero].tensor;
    const int64_t b_zeros = ElementCount(b_zero);
    if (b_zeros != 1 && b_zeros != n_)
      Fail("b_zero_point holds " + std::to_string(b_zeros) +
           " values; give one, or one per column of B (" + std::to_string(n_) + ")");
    b_zero_.resize(b_zeros);
    for (int64_t j = 0; j < b_zeros; ++j) b_zero_[j] = ByteValueAt(b_zero, j);
    const int32_t a_zero = ByteValueAt(inputs[kAZero].tensor, 0);
    sums_.assign(m_ * n_, 0);
    if (product_) {
      const nxrt_tensor& a = inputs[kA].tensor;
      const void* a_rows = a.data;
      if (trans_a_) {
        a_rows_.resize(m_ * k_);
        TransposeBytes(static_cast<const uint8_t*>(a.data), k_, m_, a_rows_.data());
        a_rows = a_rows_.data();
      }
      const void* b = product_->has_prepared_b() ? nullptr : BAsKByN(inputs[kB].tensor.data);
      product_->Run(a_rows, std::span(&a_zero, 1), b, b_zero_, sums_.data());
    }
    if (IsPresent(inputs, kC)) AddBias(DataAs<int32_t>(inputs[kC].tensor));
    if (!requantised_) {
      float* out = MutableDataAs<float>(y);
      for (int64_t i = 0; i < m_; ++i) {
        for (int64_t j = 0; j < n_; ++j) {
          out[i * n_ + j] = static_cast<float>(sums_[i * n_ + j]) * scales_[j];
        }
      }
      return;
    }
    Dispatch(Int8Types{}, y_dtype_, "QGemm", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const float zero = static_cast<float>(*DataAs<T>(inputs[kYZero].tensor));
      T* out = MutableDataAs<T>(y);
      for (int64_t i = 0; i < m_; ++i) {
        RequantizeColumns(sums_.data() + i * n_, scales_.data(), zero, n_, out + i * n_);
      }
    });
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const { FailInvalid(name_ + ": " + what); }

  // B as [K, N]: itself, or a transposed B ([N, K]) copied so.
  const void* BAsKByN(const void* b) {
    if (!trans_b_) return b;
    b_columns_.resize(k_ * n_);
    TransposeBytes(static_cast<const uint8_t*>(b), n_, k_, b_columns_.data());
    return b_columns_.data();
  }

  // alpha * a_scale * b_scale[j] (/ y_scale) per column into scales_.
  void Scales(std::span<const nxrt_value> inputs) {
    const nxrt_tensor& b_scale = inputs[kBScale].tensor;
    const int64_t count = ElementCount(b_scale);
    if (count != 1 && count != n_)
      Fail("b_scale holds " + std::to_string(count) +
           " values; give one, or one per column of B (" + std::to_string(n_) + ")");
    const float a_scale = *DataAs<float>(inputs[kAScale].tensor);
    scales_.resize(n_);
    for (int64_t j = 0; j < n_; ++j) {
      scales_[j] = alpha_ * a_scale * DataAs<float>(b_scale)[count == 1 ? 0 : j];
      if (IsPresent(inputs, kYScale)) scales_[j] /= *DataAs<float>(inputs[kYScale].tensor);
    }
  }

  void AddBias(const int32_t* c) {
    for (int64_t i = 0; i < m_; ++i) {
      for (int64_t j = 0; j < n_; ++j) sums_[i * n_ + j] += c[i * c_rows_ + j * c_cols_];
    }
  }

  std::string name_;
  bool trans_a_, trans_b_;
  float alpha_;
  bool requantised_;
  nxrt_dtype y_dtype_;
  int64_t m_ = 0, n_ = 0, k_ = 0;
  // C's element (i, j) is c[i * c_rows_ + j * c_cols_].
  int64_t c_rows_ = 0, c_cols_ = 1;
  std::optional<IntegerProduct> product_;
  std::vector<uint8_t> a_rows_, b_columns_;
  std::vector<int32_t> b_zero_, sums_;
  std::vector<float> scales_;
};

}  // namespace

void RegisterQGemmOps(OpRegistry& r) {
  r.Add("QGemm",
        {1,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           std::optional<std::string> reason = CheckInputDtype(node, inputs, kA, Int8Types{});
           if (!reason) reason = CheckInputDtype(node, inputs, kB, Int8Types{});
           return ClaimUnless(reason);
         },
         [](const sdk::Node& node, std::span<const nxrt_shape> shapes, int64_t) {
           return std::make_unique<QGemmKernel>(node, shapes);
         }},
        "com.microsoft");
}

}  // namespace nxrt::cpu
