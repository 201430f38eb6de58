// Elementwise binary ops with numpy broadcasting: arithmetic, Pow with a
// separately typed exponent, Mod, PRelu, SwiGLU, comparisons, logic and bit ops. The
// broadcast plan is made with the kernel and again for a call at other
// shapes, so one kernel serves every shape of the node's ranks; the inner loop is specialised for
// equal, scalar-left and scalar-right operands so the compiler vectorises the common cases.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "broadcast.hpp"
#include "cpu_kernel.hpp"
#include "vector_math.hpp"

namespace nxrt::cpu {
namespace {

struct BinaryParams {
  bool flag = false;  // Mod: fmod; BitShift: shift right
  double alpha = 1;   // SwiGLU: the gate's Swish alpha
};

// One innermost row of n outputs; sa and sb are the operands' steps.
template <typename TA, typename TB, typename Out, typename Op>
inline void BinaryRow(const Op& op, const TA* pa, int64_t sa, const TB* pb, int64_t sb, Out* py,
                      int64_t n) {
  using CA = ComputeType<TA>;
  using CB = ComputeType<TB>;
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) py[i] = ConvertResult<Out>(op(CA(pa[i]), CB(pb[i])));
  } else if (sa == 0 && sb == 1) {
    const CA va = CA(pa[0]);
    for (int64_t i = 0; i < n; ++i) py[i] = ConvertResult<Out>(op(va, CB(pb[i])));
  } else if (sa == 1 && sb == 0) {
    const CB vb = CB(pb[0]);
    for (int64_t i = 0; i < n; ++i) py[i] = ConvertResult<Out>(op(CA(pa[i]), vb));
  } else {
    for (int64_t i = 0; i < n; ++i) {
      py[i] = ConvertResult<Out>(op(CA(pa[i * sa]), CB(pb[i * sb])));
    }
  }
}

template <typename TA, typename TB, typename Out, typename Op>
void RunBinary(const BroadcastPlan<2>& plan, const nxrt_tensor& a_tensor,
               const nxrt_tensor& b_tensor, nxrt_tensor& out_tensor, const BinaryParams& params) {
  const TA* a = DataAs<TA>(a_tensor);
  const TB* b = DataAs<TB>(b_tensor);
  Out* y = MutableDataAs<Out>(out_tensor);
  const Op op{params};
  const int64_t sa = plan.inner_strides[0];
  const int64_t sb = plan.inner_strides[1];
  // A single element skips the vectorised loop's set-up (shape arithmetic
  // and chains of scalars); one flat row (equal shapes, a scalar operand)
  // skips the row walk, which dominates small tensors.
  if (plan.count == 1) {
    *y = ConvertResult<Out>(op(ComputeType<TA>(*a), ComputeType<TB>(*b)));
    return;
  }
  if (plan.single_row) {
    BinaryRow(op, a, sa, b, sb, y, plan.count);
    return;
  }
  ForEachRow(plan, [&](const std::array<int64_t, 2>& offsets, int64_t o, int64_t n) {
    BinaryRow(op, a + offsets[0], sa, b + offsets[1], sb, y + o, n);
  });
}

using BinaryFn = void (*)(const BroadcastPlan<2>&, const nxrt_tensor&, const nxrt_tensor&,
                          nxrt_tensor&, const BinaryParams&);

#define NXRT_BINARY_OP(Name, expr)    \
  struct Name {                       \
    BinaryParams p;                   \
    template <typename A, typename B> \
    auto operator()(A a, B b) const { \
      return expr;                    \
    }                                 \
  };

NXRT_BINARY_OP(Add, a + b)
NXRT_BINARY_OP(Sub, a - b)
NXRT_BINARY_OP(Mul, a* b)
NXRT_BINARY_OP(Equal, a == b)
NXRT_BINARY_OP(Less, a < b)
NXRT_BINARY_OP(LessOrEqual, a <= b)
NXRT_BINARY_OP(Greater, a > b)
NXRT_BINARY_OP(GreaterOrEqual, a >= b)
NXRT_BINARY_OP(And, a&& b)
NXRT_BINARY_OP(Or, a || b)
NXRT_BINARY_OP(Xor, a != b)
NXRT_BINARY_OP(BitwiseAnd, a& b)
NXRT_BINARY_OP(BitwiseOr, a | b)
NXRT_BINARY_OP(BitwiseXor, a ^ b)
NXRT_BINARY_OP(PRelu, a < A(0) ? A(a * b) : a)
NXRT_BINARY_OP(Pow, std::pow(static_cast<double>(a), static_cast<double>(b)))

// Pow of floats by one exponent of 2 or 3 (RMS norms, tanh GELUs)
// multiplies in double, the value pow rounds there, in a loop the vectoriser
// widens instead of a call per element; other exponents call pow.
template <typename TA, typename TB>
void RunPow(const BroadcastPlan<2>& plan, const nxrt_tensor& a, const nxrt_tensor& b,
            nxrt_tensor& out, const BinaryParams& params) {
  if constexpr (kIsFloat<TA>) {
    using C = ComputeType<TA>;
    const int64_t n = plan.count;
    if (ElementCount(b) == 1 && n == ElementCount(a)) {
      const double e = static_cast<double>(ComputeType<TB>(DataAs<TB>(b)[0]));
      const TA* x = DataAs<TA>(a);
      TA* y = MutableDataAs<TA>(out);
      if (e == 2.0) {
        for (int64_t i = 0; i < n; ++i) {
          const double v = static_cast<double>(C(x[i]));
          y[i] = static_cast<TA>(static_cast<C>(v * v));
        }
        return;
      }
      if (e == 3.0) {
        for (int64_t i = 0; i < n; ++i) {
          const double v = static_cast<double>(C(x[i]));
          y[i] = static_cast<TA>(static_cast<C>(v * v * v));
        }
        return;
      }
    }
  }
  RunBinary<TA, TB, TA, Pow>(plan, a, b, out, params);
}
#undef NXRT_BINARY_OP

struct Div {
  BinaryParams p;
  template <typename A, typename B>
  A operator()(A a, B b) const {
    if constexpr (std::is_integral_v<A>) {
      if (b == 0) return 0;  // integer division by zero has no value; never trap
    }
    return static_cast<A>(a / b);
  }
};

struct Mod {
  BinaryParams p;  // flag: fmod (truncated), else floored like Python
  template <typename A, typename B>
  A operator()(A a, B b) const {
    if constexpr (std::is_floating_point_v<A>) {
      const A r = std::fmod(a, b);
      if (p.flag || r == 0 || ((r < 0) == (b < 0))) return r;
      return r + b;
    } else {
      if (b == 0) return 0;
      const A r = static_cast<A>(a % b);
      if constexpr (std::is_signed_v<A>) {
        if (!p.flag && r != 0 && ((r < 0) != (b < 0))) return static_cast<A>(r + b);
      }
      return r;
    }
  }
};

// SwiGLU(a, b) = Swish(a) * b, Swish(a) = a * sigmoid(alpha * a).
struct SwiGlu {
  BinaryParams p;
  template <typename A, typename B>
  A operator()(A a, B b) const {
    return a * math::Sigmoid(static_cast<A>(p.alpha) * a) * b;
  }
};

// Right shifts of signed values are arithmetic; a shift that is negative or
// not below the width moves every bit out (leaving the sign fill on the
// right); left shifts wrap, so they are done unsigned.
struct BitShift {
  BinaryParams p;  // flag: right
  template <typename A, typename B>
  A operator()(A a, B b) const {
    using U = std::make_unsigned_t<A>;
    bool out_of_range = b >= static_cast<B>(sizeof(A) * 8);
    if constexpr (std::is_signed_v<B>) out_of_range = out_of_range || b < 0;
    if (out_of_range) {
      if constexpr (std::is_signed_v<A>) return p.flag && a < 0 ? A(-1) : A(0);
      return A(0);
    }
    return p.flag ? static_cast<A>(a >> b) : static_cast<A>(static_cast<U>(a) << b);
  }
};

// Serves every shape of its node's ranks: a call at other shapes than the
// last makes the broadcast plan again.
class BinaryKernel : public CpuKernel {
 public:
  // channel_b: b is a per-channel vector laid along a's axis 1 (the slope
  // of PRelu before opset 7) rather than broadcast from the right.
  BinaryKernel(BinaryFn fn, BinaryParams params, nxrt_dtype out_dtype, const std::string& op,
               std::span<const nxrt_shape> inputs, bool channel_b = false)
      : CpuKernel(true),
        fn_(fn),
        params_(params),
        out_dtype_(out_dtype),
        a_rank_(inputs[0].rank),
        b_rank_(inputs[1].rank),
        channel_b_(channel_b),
        op_(op) {
    Plan(std::span(inputs[0].dims, inputs[0].rank), std::span(inputs[1].dims, inputs[1].rank));
  }
  BinaryKernel(const BinaryKernel&) = delete;
  bool ServesOtherShapes() const override { return true; }
  BinaryKernel& operator=(const BinaryKernel&) = delete;

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& a = inputs[0].tensor;
    const nxrt_tensor& b = inputs[1].tensor;
    const std::span<const int64_t> a_dims(dims_, a_rank_);
    const std::span<const int64_t> b_dims(dims_ + a_rank_, b_rank_);
    if (!DimsEqual(DimsSpan(a), a_dims) || !DimsEqual(DimsSpan(b), b_dims)) {
      Plan(DimsSpan(a), DimsSpan(b));
    }
    const std::span<const int64_t> out_dims(dims_ + a_rank_ + b_rank_,
                                            dims_count_ - a_rank_ - b_rank_);
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, out_dtype_, out_dims);
    fn_(plan_, a, b, out, params_);
  }

 private:
  // The broadcast plan of operands of dims `a` and `b` (of the kernel's
  // ranks). Out of line, so that the dispatch of a small node does not pay
  // for it (registers saved, a large stack frame).
  [[gnu::noinline]] void Plan(std::span<const int64_t> a, std::span<const int64_t> b) {
    const Dims a_dims(a.begin(), a.end());
    const Dims b_dims(b.begin(), b.end());
    Dims b_plan = b_dims;
    if (channel_b_ && b_dims.size() == 1 && a_dims.size() >= 2 && b_dims[0] == a_dims[1]) {
      b_plan.assign(a_dims.size() - 1, 1);
      b_plan[0] = b_dims[0];
    }
    if (a.size() != a_rank_ || b.size() != b_rank_) {
      FailInvalid(op_ + ": a kernel for operands of ranks " + std::to_string(a_rank_) + " and " +
                  std::to_string(b_rank_) + " got " + DimsText(a_dims) + " and " +
                  DimsText(b_dims));
    }
    plan_ = MakeBroadcastPlan<2>({a_dims, b_plan}, op_);
    Dims all = a_dims;
    all.insert(all.end(), b_dims.begin(), b_dims.end());
    all.insert(all.end(), plan_.out_dims.begin(), plan_.out_dims.end());
    if (all.size() <= inline_dims_.size()) {
      std::copy(all.begin(), all.end(), inline_dims_.begin());
      dims_ = inline_dims_.data();
    } else {
      heap_dims_ = std::move(all);
      dims_ = heap_dims_.data();
    }
    dims_count_ = a_rank_ + b_rank_ + plan_.out_dims.size();
  }

  // What every dispatch reads comes first, so a dispatch over a few
  // elements touches few lines of the kernel. The dims of a, b and the
  // output lie back to back, inside the kernel when they fit (ranks up to
  // 4 each), so checking them reads no other allocation.
  BinaryFn fn_;
  BinaryParams params_;
  nxrt_dtype out_dtype_;
  size_t a_rank_;
  size_t b_rank_;
  bool channel_b_;
  size_t dims_count_ = 0;
  const int64_t* dims_ = nullptr;  // inline_dims_ or heap_dims_
  std::array<int64_t, 12> inline_dims_{};
  BroadcastPlan<2> plan_;
  Dims heap_dims_;
  std::string op_;
};

// Both operands of one dtype in `List`; the output is that dtype, or bool
// for a predicate.
template <typename Op, bool kPredicate, typename List>
// Before opset `channel_b_before`, a rank-1 second operand is per channel.
void AddBinary(OpRegistry& registry, const char* name, List list,
               BinaryParams (*read)(const sdk::Node&) = nullptr, int64_t channel_b_before = 0) {
  registry.Add(name,
               {1,
                [list](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
                  if (auto reason = CheckInputDtype(node, inputs, 0, list)) {
                    return sdk::ClaimResult::Declined(*reason);
                  }
                  return ClaimUnless(CheckInputDtype(node, inputs, 1, list));
                },
                [list, read, name, channel_b_before](const sdk::Node& node,
                                                     std::span<const nxrt_shape> inputs,
                                                     int64_t opset) -> std::unique_ptr<CpuKernel> {
                  if (inputs[0].dtype != inputs[1].dtype) {
                    FailInvalid(std::string(name) + ": operands have dtypes " +
                                DtypeName(inputs[0].dtype) + " and " + DtypeName(inputs[1].dtype));
                  }
                  nxrt_dtype out_dtype = kPredicate ? NXRT_DTYPE_BOOL : inputs[0].dtype;
                  BinaryFn fn = Dispatch(list, inputs[0].dtype, name, [](auto tag) -> BinaryFn {
                    using T = typename decltype(tag)::type;
                    using Out = std::conditional_t<kPredicate, bool, T>;
                    return &RunBinary<T, T, Out, Op>;
                  });
                  return std::make_unique<BinaryKernel>(fn, read ? read(node) : BinaryParams{},
                                                        out_dtype, name, inputs,
                                                        opset < channel_b_before);
                }});
}

using PowBaseTypes = TypeList<float, double, Float16, BFloat16, int32_t, int64_t>;

// Equal on strings compares the bytes of each element.
void RunEqualStrings(const BroadcastPlan<2>& plan, const nxrt_tensor& a_tensor,
                     const nxrt_tensor& b_tensor, nxrt_tensor& out_tensor, const BinaryParams&) {
  const auto* a = DataAs<nxrt_string_view>(a_tensor);
  const auto* b = DataAs<nxrt_string_view>(b_tensor);
  bool* y = MutableDataAs<bool>(out_tensor);
  const int64_t sa = plan.strides[0].back();
  const int64_t sb = plan.strides[1].back();
  ForEachRow(plan, [&](const std::array<int64_t, 2>& offsets, int64_t o, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const nxrt_string_view& x = a[offsets[0] + i * sa];
      const nxrt_string_view& z = b[offsets[1] + i * sb];
      y[o + i] = x.size == z.size && (x.size == 0 || std::memcmp(x.data, z.data, x.size) == 0);
    }
  });
}

}  // namespace

void RegisterBinaryOps(OpRegistry& r) {
  AddBinary<Add, false>(r, "Add", NumericTypes{});
  AddBinary<Sub, false>(r, "Sub", NumericTypes{});
  AddBinary<Mul, false>(r, "Mul", NumericTypes{});
  AddBinary<Div, false>(r, "Div", NumericTypes{});
  AddBinary<PRelu, false>(r, "PRelu", NumericTypes{}, nullptr, 7);
  AddBinary<Mod, false>(r, "Mod", NumericTypes{}, [](const sdk::Node& node) {
    return BinaryParams{node.AttrInt("fmod", 0) != 0};
  });
  AddBinary<BitShift, false>(r, "BitShift", IntTypes{}, [](const sdk::Node& node) {
    return BinaryParams{node.AttrString("direction", "") == "RIGHT"};
  });
  AddBinary<SwiGlu, false>(r, "SwiGLU", FloatTypes{}, [](const sdk::Node& node) {
    BinaryParams p;
    p.alpha = node.AttrFloat("alpha", 1.0f);
    return p;
  });
  AddBinary<BitwiseAnd, false>(r, "BitwiseAnd", IntTypes{});
  AddBinary<BitwiseOr, false>(r, "BitwiseOr", IntTypes{});
  AddBinary<BitwiseXor, false>(r, "BitwiseXor", IntTypes{});
  AddBinary<And, true>(r, "And", TypeList<bool>{});
  AddBinary<Or, true>(r, "Or", TypeList<bool>{});
  AddBinary<Xor, true>(r, "Xor", TypeList<bool>{});
  AddBinary<Less, true>(r, "Less", NumericTypes{});
  AddBinary<LessOrEqual, true>(r, "LessOrEqual", NumericTypes{});
  AddBinary<Greater, true>(r, "Greater", NumericTypes{});
  AddBinary<GreaterOrEqual, true>(r, "GreaterOrEqual", NumericTypes{});

  OpRegistry numeric_equal;
  AddBinary<Equal, true>(numeric_equal, "Equal", AllTypes{});
  const OpDefinition numeric = *numeric_equal.Find("", "Equal");
  r.Add("Equal",
        {1,
         [numeric](const sdk::Node& node, int64_t opset, std::span<const nxrt_value_info> inputs) {
           if (inputs.size() == 2 && inputs[0].dtype == NXRT_DTYPE_STRING &&
               inputs[1].dtype == NXRT_DTYPE_STRING) {
             return sdk::ClaimResult::Claimed();
           }
           return numeric.claim(node, opset, inputs);
         },
         [numeric](const sdk::Node& node, std::span<const nxrt_shape> inputs,
                   int64_t opset) -> std::unique_ptr<CpuKernel> {
           if (inputs[0].dtype == NXRT_DTYPE_STRING && inputs[1].dtype == NXRT_DTYPE_STRING) {
             return std::make_unique<BinaryKernel>(&RunEqualStrings, BinaryParams{},
                                                   NXRT_DTYPE_BOOL, "Equal", inputs);
           }
           return numeric.create(node, inputs, opset);
         }});

  r.Add("Pow", {1,
                [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
                  if (auto reason = CheckInputDtype(node, inputs, 0, PowBaseTypes{})) {
                    return sdk::ClaimResult::Declined(*reason);
                  }
                  return ClaimUnless(CheckInputDtype(node, inputs, 1, NumericTypes{}));
                },
                [](const sdk::Node&, std::span<const nxrt_shape> inputs,
                   int64_t) -> std::unique_ptr<CpuKernel> {
                  BinaryFn fn = Dispatch(PowBaseTypes{}, inputs[0].dtype, "Pow", [&](auto base) {
                    using TA = typename decltype(base)::type;
                    return Dispatch(NumericTypes{}, inputs[1].dtype, "Pow",
                                    [](auto exponent) -> BinaryFn {
                                      using TB = typename decltype(exponent)::type;
                                      return &RunPow<TA, TB>;
                                    });
                  });
                  return std::make_unique<BinaryKernel>(fn, BinaryParams{}, inputs[0].dtype, "Pow",
                                                        inputs);
                }});
}

}  // namespace nxrt::cpu
