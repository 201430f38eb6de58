// pkg.nxrt MatMulAdd: Y = act(A x B + C) + D for float A of rank 1 or more,
// a 2-D B, C and D (D optional) that broadcast to the product's shape, and
// "activation" Relu or Gelu (with Gelu's "approximate") or none. The host
// fuses MatMul, Add[, Relu or Gelu][, Add] into it when this EP claims it
// (core/src/partitioner/matmul_fusion.hpp).
//
// Several rows run as one oneDNN product whose epilogue adds C (as its bias
// when C is one row, else summed onto Y filled with C), applies the
// activation and adds D while each tile is in registers (D too is summed
// onto Y filled with it when there is no activation); a single row runs on
// gemv over Y filled with C. A C or D that broadcasts any other way is filled or added
// in a loop.
#include <memory>
#include <optional>
#include <string>

#include "broadcast.hpp"
#include "onednn/plain_primitive.hpp"
#include "packing_kernel.hpp"

namespace nxrt::cpu {
namespace {

Dims DimsOfShape(const nxrt_shape& shape) {
  return Dims(shape.dims, shape.dims + shape.rank);
}

// How a term the product's shape receives is laid out.
struct Term {
  enum class Form { kAbsent, kRow, kWhole, kBroadcast };
  Form form = Form::kAbsent;
  BroadcastPlan<2> plan;  // for kBroadcast: out against the term
};

Term TermOf(const Dims& out, const Dims& dims, int64_t n, const char* name) {
  Term term;
  if (dims == out) {
    term.form = Term::Form::kWhole;
  } else if (ElementCount(dims) == n && dims.size() <= out.size() &&
             (dims.empty() ? n == 1 : dims.back() == n)) {
    term.form = Term::Form::kRow;
  } else {
    term.plan = MakeBroadcastPlan<2>({out, dims}, "MatMulAdd");
    if (term.plan.out_dims != out) {
      FailInvalid(std::string("MatMulAdd: ") + name + " of shape " + DimsText(dims) +
                  " does not broadcast to the product's shape " + DimsText(out));
    }
    term.form = Term::Form::kBroadcast;
  }
  return term;
}

dnnl::algorithm ActivationOf(const sdk::Node& node) {
  const std::string activation = node.AttrString("activation", "");
  if (activation == "Relu") return dnnl::algorithm::eltwise_relu;
  if (activation == "Gelu") {
    return node.AttrString("approximate", "none") == "tanh" ? dnnl::algorithm::eltwise_gelu_tanh
                                                            : dnnl::algorithm::eltwise_gelu_erf;
  }
  return dnnl::algorithm::undef;
}

// Like MatMul's kernel, it works out the product again for a call at new
// shapes, so one kernel serves every shape of the node's ranks.
class MatMulAddKernel : public PackingKernel {
 public:
  MatMulAddKernel(const sdk::Node& node, std::span<const nxrt_shape> inputs)
      : PackingKernel(NXRT_DTYPE_FLOAT32, DimsOfShape(inputs[1]), false),
        activation_(ActivationOf(node)) {
    if (inputs[0].rank < 1 || b_dims_.size() != 2) {
      FailInvalid("MatMulAdd: A needs rank 1 or more and B rank 2");
    }
    const bool has_d = inputs.size() > 3 && inputs[3].dtype != NXRT_DTYPE_UNDEFINED;
    Configure(DimsOfShape(inputs[0]), b_dims_, DimsOfShape(inputs[2]),
              has_d ? DimsOfShape(inputs[3]) : Dims{}, has_d);
  }
  bool ServesOtherShapes() const override { return true; }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const bool has_d = IsPresent(inputs, 3);
    if (!std::ranges::equal(DimsSpan(inputs[0].tensor), a_dims_) ||
        !std::ranges::equal(DimsSpan(inputs[1].tensor), b_in_dims_) ||
        !std::ranges::equal(DimsSpan(inputs[2].tensor), c_dims_) ||
        (has_d && !std::ranges::equal(DimsSpan(inputs[3].tensor), d_dims_))) {
      Configure(DimsOf(inputs[0].tensor), DimsOf(inputs[1].tensor), DimsOf(inputs[2].tensor),
                has_d ? DimsOf(inputs[3].tensor) : Dims{}, has_d);
    }
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, out_dims_);
    if (rows_ * n_ == 0) return;
    float* y = MutableDataAs<float>(out);
    const float* a = DataAs<float>(inputs[0].tensor);
    std::vector<float> unused;
    const float* b = BData<float, float>(inputs[1].tensor, unused);
    const float* c = DataAs<float>(inputs[2].tensor);
    const float* d = d_.form == Term::Form::kAbsent ? nullptr : DataAs<float>(inputs[3].tensor);
    if (HasFloatPlan()) {
      if (summed_ == Summed::kC) Fill(c_, c, y);
      if (summed_ == Summed::kD) Fill(d_, d, y);
      RunFloat(a, b, y, c, d);
    } else {
      Fill(c_, c, y);
      if (k_ > 0) RowTimesMatrix(false, n_, k_, 1.0f, a, b, 1.0f, y);
      if (eltwise_) eltwise_->Run(y, y);
      if (d_.form == Term::Form::kWhole) {
        for (int64_t i = 0; i < rows_ * n_; ++i) y[i] += d[i];
      }
    }
    if (d_.form == Term::Form::kRow) {
      for (int64_t r = 0; r < rows_; ++r) {
        for (int64_t j = 0; j < n_; ++j) y[r * n_ + j] += d[j];
      }
    } else if (d_.form == Term::Form::kBroadcast) {
      const int64_t step = d_.plan.strides[1].back();
      ForEachRow(d_.plan, [&](const std::array<int64_t, 2>& off, int64_t o, int64_t len) {
        for (int64_t i = 0; i < len; ++i) y[o + i] += d[off[1] + i * step];
      });
    }
  }

 private:
  // Works out the product for A `a`, B `b`, C `c` and D `d` (when `has_d`).
  // The dims are kept last, so a call that fails here fails again.
  void Configure(const Dims& a, const Dims& b, const Dims& c, const Dims& d, bool has_d) {
    a_dims_.clear();  // matches no A until the product is worked out
    if (a.empty() || b.size() != 2) FailInvalid("MatMulAdd: A needs rank 1 or more and B rank 2");
    k_ = a.back();
    n_ = b[1];
    if (b[0] != k_) {
      FailInvalid("MatMulAdd: inner dimensions differ: " + DimsText(a) + " x " + DimsText(b));
    }
    rows_ = ElementCount(std::span(a).first(a.size() - 1));
    out_dims_ = a;
    out_dims_.back() = n_;
    c_ = TermOf(out_dims_, c, n_, "C");
    d_ = has_d ? TermOf(out_dims_, d, n_, "D") : Term{};
    // A term Y holds before the product is summed into it (beta 1) rather
    // than read by a binary post-op: oneDNN plans binary post-ops only at a
    // fixed M, which would make every new row count plan anew.
    summed_ = Summed::kNone;
    if (c_.form == Term::Form::kBroadcast || c_.form == Term::Form::kWhole) {
      summed_ = Summed::kC;
    } else if (d_.form == Term::Form::kWhole && activation_ == dnnl::algorithm::undef) {
      summed_ = Summed::kD;
    }
    onednn::MatmulShape shape{rows_, n_, k_};
    shape.bias = c_.form == Term::Form::kRow;
    shape.beta = summed_ == Summed::kNone ? 0.0f : 1.0f;
    shape.activation = activation_;
    shape.residual = d_.form == Term::Form::kWhole && summed_ != Summed::kD;
    PlanFloat(shape, true);
    const bool separate = !HasFloatPlan() && activation_ != dnnl::algorithm::undef;
    const int64_t eltwise_count = separate ? rows_ * n_ : 0;
    if (eltwise_count != eltwise_count_) {
      eltwise_.reset();
      eltwise_count_ = eltwise_count;
      if (eltwise_count > 0) {
        eltwise_ = onednn::PlanEltwise(activation_, 0.0f, 0.0f, eltwise_count);
        if (!eltwise_) FailUnsupported("MatMulAdd: oneDNN has no plan for the activation");
      }
    }
    a_dims_ = a;
    b_in_dims_ = b;
    c_dims_ = c;
    d_dims_ = d;
  }

  // Y = the term, broadcast to Y's shape.
  void Fill(const Term& term, const float* values, float* y) const {
    if (term.form == Term::Form::kWhole) {
      if (values != y) std::copy_n(values, rows_ * n_, y);
    } else if (term.form == Term::Form::kRow) {
      for (int64_t r = 0; r < rows_; ++r) std::copy_n(values, n_, y + r * n_);
    } else {
      const int64_t step = term.plan.strides[1].back();
      ForEachRow(term.plan, [&](const std::array<int64_t, 2>& off, int64_t o, int64_t len) {
        for (int64_t i = 0; i < len; ++i) y[o + i] = values[off[1] + i * step];
      });
    }
  }

  const dnnl::algorithm activation_;
  Dims a_dims_;  // the inputs' dims the product was worked out for
  Dims b_in_dims_;
  Dims c_dims_;
  Dims d_dims_;
  int64_t rows_ = 0;
  int64_t k_ = 0;
  int64_t n_ = 0;
  Dims out_dims_;
  Term c_;
  Term d_;
  enum class Summed { kNone, kC, kD };
  Summed summed_ = Summed::kNone;                  // the term Y is filled with before the product
  std::optional<onednn::PlainPrimitive> eltwise_;  // the activation without a float plan
  int64_t eltwise_count_ = 0;                      // the elements eltwise_ was planned for
};

sdk::ClaimResult ClaimMatMulAdd(const sdk::Node& node, int64_t,
                                std::span<const nxrt_value_info> inputs) {
  const std::string activation = node.AttrString("activation", "");
  if (!activation.empty() && activation != "Relu" && activation != "Gelu") {
    return sdk::ClaimResult::Declined("MatMulAdd: activation '" + activation +
                                      "' not implemented (Relu and Gelu are)");
  }
  const std::string approximate = node.AttrString("approximate", "none");
  if (approximate != "none" && approximate != "tanh") {
    return sdk::ClaimResult::Declined("MatMulAdd: Gelu approximate='" + approximate +
                                      "' not implemented");
  }
  for (size_t index = 0; index < 3; ++index) {
    if (auto reason = CheckInputDtype(node, inputs, index, TypeList<float>{})) {
      return sdk::ClaimResult::Declined(*reason);
    }
  }
  if (inputs.size() > 3 && inputs[3].kind != NXRT_VALUE_NONE) {
    if (auto reason = CheckInputDtype(node, inputs, 3, TypeList<float>{})) {
      return sdk::ClaimResult::Declined(*reason);
    }
  }
  if (inputs[0].rank < 1 || inputs[1].rank != 2) {
    return sdk::ClaimResult::Declined("MatMulAdd: runs A of rank 1 or more times a 2-D B");
  }
  return sdk::ClaimResult::Claimed();
}

}  // namespace

void RegisterMatMulAddOps(OpRegistry& r) {
  r.Add("MatMulAdd",
        {1, ClaimMatMulAdd,
         [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
           return std::make_unique<MatMulAddKernel>(node, inputs);
         }},
        "pkg.nxrt");
}

}  // namespace nxrt::cpu
