// The base of the CPU EP's float matrix products (MatMul, Gemm, the fused
// MatMulAdd): a oneDNN plan for products of several rows, OpenBLAS's gemv for
// a single row, and a constant B kept in a ConstantMatrix that the node's
// shape variants share, in the form each of them reads.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "constant_matrix.hpp"
#include "cpu_kernel.hpp"
#include "onednn/float_matmul.hpp"

namespace nxrt::cpu {

// Kernel base for MatMul and Gemm: the float plan, and a constant B kept in
// a ConstantMatrix shared by the node's shape variants. A float plan over a
// constant B reads it in oneDNN's preferred layout, or as given with the
// `prepack` option off; a single row and double products read it as given.
class PackingKernel : public CpuKernel {
 public:
  PackingKernel(nxrt_dtype dtype, Dims b_dims, bool transpose_b)
      : CpuKernel(true), dtype_(dtype), b_dims_(std::move(b_dims)), transpose_b_(transpose_b) {}

  void PrepareConstantInputs(std::span<const nxrt_constant_input> constants) override {
    if (!Contains(FloatTypes{}, dtype_)) return;
    for (const nxrt_constant_input& c : constants) {
      if (c.input_index != 1) continue;
      constant_ = std::make_shared<ConstantMatrix>(c);
      UseConstant(&c);
    }
  }
  void ApplySettings(const EpSettings& settings, std::string_view /*node_name*/) override;
  std::shared_ptr<sdk::SharedState> ShareableConstantState() override { return constant_; }
  bool AdoptShareableConstantState(const std::shared_ptr<sdk::SharedState>& state) override {
    auto constant = std::dynamic_pointer_cast<ConstantMatrix>(state);
    if (!constant || constant->dtype() != dtype_ || constant->dims() != b_dims_) return false;
    constant_ = std::move(constant);
    UseConstant(nullptr);
    return true;
  }

 protected:
  // Plans the float product (float, float16, bfloat16) of several rows for
  // `shape`, reading B as given until B proves constant, or keeps the plan
  // it has where that plan serves `shape`'s rows: a kernel that meets a new
  // shape calls it again, and a plan leaving M to run time serves every row
  // count. A single row needs no plan: RowTimesMatrix reads B directly.
  // `whole_b`: the plan reads B as one matrix (not one of a batch), so it
  // may read a prepared copy.
  void PlanFloat(const onednn::MatmulShape& shape, bool whole_b);
  // y[N] = alpha * a[K] * op(B)[K,N] + beta * y for a single row through
  // OpenBLAS's gemv, which streams B as given at memory speed; oneDNN's
  // product falls behind on a single row (bench/math_libraries.cpp), most
  // of all once B no longer fits in the last-level cache. oneDNN's sgemm
  // takes a B as given of 16K to 64K elements, where it is the faster. A gemv reads
  // megabytes of B for a few thousand multiply-adds, so with `threads` above
  // one a large B is split into contiguous blocks (parallel_blocks.hpp),
  // each streamed by one core: rows of a transposed B ([N,K]), each giving
  // whole outputs, or runs of B's K rows, each giving partial sums that are
  // added in a fixed order. The blocks depend on `threads` and the shape
  // alone, so results repeat from run to run. Allocates nothing.
  void RowTimesMatrix(bool trans_b, int64_t n, int64_t k, float alpha, const float* a,
                      const float* b, float beta, float* y);
  // Whether the float plan covers the product of the last PlanFloat (false
  // for a single row or when K is 0).
  bool HasFloatPlan() const { return plan_covers_; }
  // `b` is B as given; the plan reads its prepared copy instead when B is
  // constant. `bias` and `residual` as the plan's shape asks.
  void RunFloat(const float* a, const float* b, float* y, const float* bias = nullptr,
                const float* residual = nullptr) {
    float_matmul_->Run(a, preferred_ ? static_cast<const float*>(preferred_->data()) : b, y, bias,
                       residual);
  }

  // B in compute type C as given: the constant's copy, or `b` itself, or
  // `scratch` widened from `b`. Null for a constant B the float plan reads
  // in its own layout.
  template <typename T, typename C>
  const C* BData(const nxrt_tensor& b, std::vector<C>& scratch) {
    if (preferred_ && plan_covers_) return nullptr;
    if (constant_) {
      // A kernel serving other shapes may need this form only now.
      if (as_given_ == nullptr) as_given_ = constant_->AsGiven(nullptr);
      return static_cast<const C*>(as_given_);
    }
    if constexpr (std::is_same_v<T, C>) {
      return DataAs<T>(b);
    } else {
      Widen(DataAs<T>(b), ElementCount(b), scratch.data());
      return scratch.data();
    }
  }

  nxrt_dtype dtype_;
  Dims b_dims_;
  bool transpose_b_;

 private:
  // Takes the form of the constant B this kernel reads; `source` is the
  // constant while the host hands it over.
  void UseConstant(const nxrt_constant_input* source) {
    if (plan_covers_ && whole_b_ && prepack_) {
      float_matmul_.emplace(float_matmul_->shape(), onednn::WeightsLayout::kPreferred);
      preferred_ = constant_->Preferred(*float_matmul_, source);
    } else {
      as_given_ = constant_->AsGiven(source);
    }
  }

  std::optional<onednn::FloatMatmul> float_matmul_;
  bool plan_covers_ = false;
  bool whole_b_ = false;
  bool prepack_ = true;
  int threads_ = 1;
  std::vector<float> row_partials_;  // the partial sums of all but the first run of K rows
  std::shared_ptr<ConstantMatrix> constant_;
  const void* as_given_ = nullptr;                            // in constant_
  std::shared_ptr<const onednn::PreparedWeights> preferred_;  // for float_matmul_
};

}  // namespace nxrt::cpu
