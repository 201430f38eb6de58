// MatMul (numpy batched broadcasting, 1-D promotion) and Gemm; the 8-bit
// products are integer_matmul_ops.cpp. float products of several rows run
// on a oneDNN plan made with the kernel (onednn/float_matmul.hpp), a single
// row (every decode step) on OpenBLAS's gemv, float16 and bfloat16 widened
// to float around them; double goes through OpenBLAS; integer MatMul uses
// plain loops. A constant B is kept in a ConstantMatrix the node's shape
// variants share: the oneDNN product of several rows reads it in oneDNN's
// blocked layout, gemv as given.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "broadcast.hpp"
#include "cpu_kernel.hpp"
#include "onednn/batched_matmul.hpp"
#include "packing_kernel.hpp"

namespace nxrt::cpu {
namespace {

// Row-major C[M,N] = alpha * op(A) * op(B) + beta * C in double. A single
// row goes through gemv: OpenBLAS's gemm packs all of B first, which costs
// several times the product itself when M is 1.
void BlasGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
              const double* a, const double* b, double beta, double* c) {
  if (m == 1 && k > 0) {
    cblas_dgemv(CblasRowMajor, trans_b ? CblasNoTrans : CblasTrans,
                static_cast<int>(trans_b ? n : k), static_cast<int>(trans_b ? k : n), alpha, b,
                static_cast<int>(trans_b ? k : n), a, 1, beta, c, 1);
    return;
  }
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), alpha, a, static_cast<int>(trans_a ? m : k), b,
              static_cast<int>(trans_b ? k : n), beta, c, static_cast<int>(n));
}

// Integer C[M,N] = op(A) * op(B) (+ C when accumulate), in loops: the
// integer MatMul wraps on overflow like the integer type, which no BLAS
// routine offers.
template <typename T>
void LoopGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, const T* b,
              bool accumulate, T* c) {
  for (int64_t i = 0; i < m; ++i) {
    T* row = c + i * n;
    if (!accumulate) std::fill(row, row + n, T(0));
    for (int64_t p = 0; p < k; ++p) {
      const T av = trans_a ? a[p * m + i] : a[i * k + p];
      if (trans_b) {
        for (int64_t j = 0; j < n; ++j) row[j] = static_cast<T>(row[j] + av * b[j * k + p]);
      } else {
        const T* brow = b + p * n;
        for (int64_t j = 0; j < n; ++j) row[j] = static_cast<T>(row[j] + av * brow[j]);
      }
    }
  }
}

// Reads its extents from the shapes it is given: a call at shapes other
// than the last works them out again (and plans the float product again
// only where its plan does not serve the new rows), so one kernel serves
// every shape of the node's ranks.
class MatMulKernel : public PackingKernel {
 public:
  MatMulKernel(nxrt_dtype dtype, std::span<const nxrt_shape> inputs)
      : PackingKernel(dtype, Dims(inputs[1].dims, inputs[1].dims + inputs[1].rank), false) {
    Configure(Dims(inputs[0].dims, inputs[0].dims + inputs[0].rank), b_dims_);
  }
  bool ServesOtherShapes() const override { return true; }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& a = inputs[0].tensor;
    const nxrt_tensor& b = inputs[1].tensor;
    if (!std::ranges::equal(DimsSpan(a), a_dims_) || !std::ranges::equal(DimsSpan(b), b_in_dims_)) {
      Configure(DimsOf(a), DimsOf(b));
    }
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, out_dims_);
    if (ElementCount(out_dims_) == 0) return;
    Dispatch(NumericTypes{}, dtype_, "MatMul", [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
        Widen(DataAs<T>(inputs[0].tensor), ElementCount(inputs[0].tensor), a_scratch_.data());
        const float* b = BData<T, float>(inputs[1].tensor, b_scratch_);
        Run<float>(a_scratch_.data(), b, out_scratch_.data());
        T* y = MutableDataAs<T>(out);
        for (size_t i = 0; i < out_scratch_.size(); ++i) y[i] = T(out_scratch_[i]);
      } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        std::vector<T> unused;
        Run<T>(DataAs<T>(inputs[0].tensor), BData<T, T>(inputs[1].tensor, unused),
               MutableDataAs<T>(out));
      } else {
        Run<T>(DataAs<T>(inputs[0].tensor), DataAs<T>(inputs[1].tensor), MutableDataAs<T>(out));
      }
    });
  }

 private:
  // Works out the product of A `a` and B `b` (their dims as given). The
  // dims are kept last, so a call that fails here fails again.
  void Configure(Dims a, Dims b) {
    Dims given_a = a;
    Dims given_b = b;
    a_dims_.clear();  // matches no A until the product is worked out
    if (a.empty() || b.empty()) FailInvalid("MatMul: operands must have rank 1 or more");
    const bool a_vector = a.size() == 1;
    const bool b_vector = b.size() == 1;
    if (a_vector) a.insert(a.begin(), 1);
    if (b_vector) b.push_back(1);
    m_ = a[a.size() - 2];
    k_ = a[a.size() - 1];
    n_ = b[b.size() - 1];
    if (b[b.size() - 2] != k_) {
      FailInvalid("MatMul: inner dimensions differ: " + DimsText(a) + " x " + DimsText(b));
    }
    a_batch_.assign(a.begin(), a.end() - 2);
    b_batch_.assign(b.begin(), b.end() - 2);
    batch_ = MakeBroadcastPlan<2>({a_batch_, b_batch_}, "MatMul");
    out_dims_ = batch_.out_dims;
    if (!a_vector) out_dims_.push_back(m_);
    if (!b_vector) out_dims_.push_back(n_);
    // B shared by every batch and A contiguous: one product with batch*M rows.
    fold_batch_ = ElementCount(b_batch_) == 1 && ElementCount(a_batch_) == batch_.count;
    // Equal batches of a product computed in float: one batched call.
    batched_items_ = !fold_batch_ && a_batch_ == b_batch_ && batch_.count > 1 && k_ > 0 &&
                     Contains(FloatTypes{}, dtype_);
    if (batched_items_ && !batched_) batched_ = onednn::BatchedFloatMatmul::Plan();
    PlanFloat({fold_batch_ ? batch_.count * m_ : m_, n_, k_}, fold_batch_);
    if (dtype_ == NXRT_DTYPE_FLOAT16 || dtype_ == NXRT_DTYPE_BFLOAT16) {
      a_scratch_.resize(ElementCount(a));
      b_scratch_.resize(ElementCount(b));
      out_scratch_.resize(ElementCount(out_dims_));
    }
    a_dims_ = std::move(given_a);
    b_in_dims_ = std::move(given_b);
  }

  template <typename C>
  void Gemm(int64_t rows, const C* a, const C* b, C* y) {
    if constexpr (std::is_same_v<C, float>) {
      if (HasFloatPlan()) {
        RunFloat(a, b, y);
      } else if (k_ == 0) {
        std::fill_n(y, rows * n_, 0.0f);
      } else {
        RowTimesMatrix(false, n_, k_, 1.0f, a, b, 0.0f, y);
      }
    } else if constexpr (std::is_same_v<C, double>) {
      BlasGemm(false, false, rows, n_, k_, 1.0, a, b, 0.0, y);
    } else {
      LoopGemm<C>(false, false, rows, n_, k_, a, b, false, y);
    }
  }

  template <typename C>
  void Run(const C* a, const C* b, C* y) {
    if constexpr (std::is_same_v<C, float>) {
      if (batched_items_ && batched_) {
        batched_->Run(batch_.count, m_, n_, k_, a, b, y);
        return;
      }
    }
    if (fold_batch_) {
      Gemm<C>(batch_.count * m_, a, b, y);
      return;
    }
    const int64_t a_step = m_ * k_;
    const int64_t b_step = k_ * n_;
    const int64_t y_step = m_ * n_;
    const int64_t sa = batch_.strides[0].back();
    const int64_t sb = batch_.strides[1].back();
    ForEachRow(batch_, [&](const std::array<int64_t, 2>& off, int64_t o, int64_t len) {
      for (int64_t i = 0; i < len; ++i) {
        Gemm<C>(m_, a + (off[0] + i * sa) * a_step, b + (off[1] + i * sb) * b_step,
                y + (o + i) * y_step);
      }
    });
  }

  Dims a_dims_;     // A as the product was worked out for
  Dims b_in_dims_;  // B likewise (b_dims_ is B as the kernel was made for)
  int64_t m_ = 0;
  int64_t k_ = 0;
  int64_t n_ = 0;
  Dims a_batch_;
  Dims b_batch_;
  BroadcastPlan<2> batch_;
  Dims out_dims_;
  bool fold_batch_ = false;
  bool batched_items_ = false;  // equal batches, run by batched_
  std::optional<onednn::BatchedFloatMatmul> batched_;
  std::vector<float> a_scratch_;
  std::vector<float> b_scratch_;
  std::vector<float> out_scratch_;
};

class GemmKernel : public PackingKernel {
 public:
  GemmKernel(const sdk::Node& node, nxrt_dtype dtype, std::span<const nxrt_shape> inputs,
             int64_t opset)
      : PackingKernel(dtype, Dims(inputs[1].dims, inputs[1].dims + inputs[1].rank),
                      node.AttrInt("transB", 0) != 0),
        trans_a_(node.AttrInt("transA", 0) != 0),
        alpha_(node.AttrFloat("alpha", 1.0f)),
        beta_(node.AttrFloat("beta", 1.0f)),
        relu_(node.op_type() == "FusedGemm") {
    const nxrt_shape& a = inputs[0];
    if (a.rank != 2 || b_dims_.size() != 2) FailInvalid("Gemm: A and B must be 2-D");
    m_ = trans_a_ ? a.dims[1] : a.dims[0];
    k_ = trans_a_ ? a.dims[0] : a.dims[1];
    n_ = transpose_b_ ? b_dims_[0] : b_dims_[1];
    if ((transpose_b_ ? b_dims_[1] : b_dims_[0]) != k_)
      FailInvalid("Gemm: inner dimensions differ");
    out_dims_ = {m_, n_};
    if (inputs.size() > 2 && inputs[2].dtype != NXRT_DTYPE_UNDEFINED) {
      c_dims_.assign(inputs[2].dims, inputs[2].dims + inputs[2].rank);
      c_plan_ = MakeBroadcastPlan<2>({Dims{m_, n_}, c_dims_}, "Gemm");
      if (c_plan_.out_dims != Dims{m_, n_}) FailInvalid("Gemm: C does not broadcast to (M, N)");
      // Before opset 7, C broadcasts only when the node says so.
      if (opset < 7 && node.AttrInt("broadcast", 0) == 0 && c_dims_ != Dims{m_, n_}) {
        FailInvalid("Gemm-" + std::to_string(opset) + ": C is " + DimsText(c_dims_) +
                    " but must be (M, N) = " + DimsText(Dims{m_, n_}) +
                    " without broadcast=1; set broadcast=1 or give C the full shape");
      }
      has_c_ = true;
    }
    onednn::MatmulShape shape{m_, n_, k_, trans_a_, transpose_b_, alpha_, has_c_ ? beta_ : 0.0f};
    if (relu_) shape.activation = dnnl::algorithm::eltwise_relu;
    PlanFloat(shape, true);
    if (dtype == NXRT_DTYPE_FLOAT16 || dtype == NXRT_DTYPE_BFLOAT16) {
      a_scratch_.resize(m_ * k_);
      b_scratch_.resize(k_ * n_);
      out_scratch_.resize(m_ * n_);
    }
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, out_dims_);
    if (m_ * n_ == 0) return;
    Dispatch(FloatTypes{}, dtype_, "Gemm", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      C* y = std::is_same_v<T, C> ? reinterpret_cast<C*>(out.data)
                                  : reinterpret_cast<C*>(out_scratch_.data());
      const C* a = nullptr;
      if constexpr (std::is_same_v<T, C>) {
        a = DataAs<T>(inputs[0].tensor);
      } else {
        Widen(DataAs<T>(inputs[0].tensor), m_ * k_, a_scratch_.data());
        a = a_scratch_.data();
      }
      const C* b = nullptr;
      if constexpr (std::is_same_v<T, C>) {
        std::vector<C> unused;
        b = BData<T, C>(inputs[1].tensor, unused);
      } else {
        b = BData<T, C>(inputs[1].tensor, b_scratch_);
      }
      const bool add_c = has_c_ && beta_ != 0.0f;
      if (add_c) FillWithC<T, C>(inputs[2].tensor, y);
      if constexpr (std::is_same_v<C, double>) {
        BlasGemm(trans_a_, transpose_b_, m_, n_, k_, static_cast<double>(alpha_), a, b,
                 add_c ? static_cast<double>(beta_) : 0.0, y);
      } else if (HasFloatPlan()) {
        RunFloat(a, b, y);
      } else if (k_ > 0) {
        RowTimesMatrix(transpose_b_, n_, k_, alpha_, a, b, add_c ? beta_ : 0.0f, y);
      } else if (add_c) {
        for (int64_t i = 0; i < m_ * n_; ++i) y[i] *= beta_;
      } else {
        std::fill_n(y, m_ * n_, 0.0f);
      }
      // The float plan applies it as it stores; NaN stays NaN, as in Relu.
      if (relu_ && !HasFloatPlan()) {
        for (int64_t i = 0; i < m_ * n_; ++i) y[i] = y[i] < 0 ? C(0) : y[i];
      }
      if constexpr (!std::is_same_v<T, C>) {
        T* dst = MutableDataAs<T>(out);
        for (int64_t i = 0; i < m_ * n_; ++i) dst[i] = T(y[i]);
      }
    });
  }

 private:
  template <typename T, typename C>
  void FillWithC(const nxrt_tensor& c_tensor, C* y) const {
    const T* c = DataAs<T>(c_tensor);
    const int64_t sc = c_plan_.strides[1].back();
    ForEachRow(c_plan_, [&](const std::array<int64_t, 2>& off, int64_t o, int64_t n) {
      for (int64_t i = 0; i < n; ++i) y[o + i] = static_cast<C>(c[off[1] + i * sc]);
    });
  }

  bool trans_a_;
  float alpha_;
  float beta_;
  bool relu_;  // com.microsoft FusedGemm with activation Relu
  int64_t m_ = 0;
  int64_t k_ = 0;
  int64_t n_ = 0;
  Dims out_dims_;
  bool has_c_ = false;
  Dims c_dims_;
  BroadcastPlan<2> c_plan_;
  std::vector<float> a_scratch_;
  std::vector<float> b_scratch_;
  std::vector<float> out_scratch_;
};

using MatMulTypes =
    TypeList<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t>;

}  // namespace

void RegisterMatMulOps(OpRegistry& r) {
  r.Add("MatMul", {1,
                   [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
                     if (auto reason = CheckInputDtype(node, inputs, 0, MatMulTypes{})) {
                       return sdk::ClaimResult::Declined(*reason);
                     }
                     return ClaimUnless(CheckInputDtype(node, inputs, 1, MatMulTypes{}));
                   },
                   [](const sdk::Node&, std::span<const nxrt_shape> inputs, int64_t) {
                     return std::make_unique<MatMulKernel>(inputs[0].dtype, inputs);
                   }});
  r.Add("Gemm", {1,
                 [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
                   if (auto reason = CheckInputDtype(node, inputs, 0, FloatTypes{})) {
                     return sdk::ClaimResult::Declined(*reason);
                   }
                   return ClaimUnless(CheckInputDtype(node, inputs, 1, FloatTypes{}));
                 },
                 [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t opset) {
                   return std::make_unique<GemmKernel>(node, inputs[0].dtype, inputs, opset);
                 }});
  // ONNX Runtime's contrib op, which the host also fuses a Gemm and its Relu
  // into; it follows Gemm-13 (C always broadcasts).
  r.Add("FusedGemm",
        {1,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           const std::string activation = node.AttrString("activation", "");
           if (activation != "Relu") {
             return sdk::ClaimResult::Declined("FusedGemm: activation '" + activation +
                                               "' not implemented (Relu is)");
           }
           if (auto reason = CheckInputDtype(node, inputs, 0, FloatTypes{})) {
             return sdk::ClaimResult::Declined(*reason);
           }
           return ClaimUnless(CheckInputDtype(node, inputs, 1, FloatTypes{}));
         },
         [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
           return std::make_unique<GemmKernel>(node, inputs[0].dtype, inputs, 13);
         }},
        "com.microsoft");
}

}  // namespace nxrt::cpu
