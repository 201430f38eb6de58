// Elementwise unary math and activations: one output of the input's shape,
// computed in a flat loop over contiguous memory (the 16-bit floats in
// float). Parameters come from attributes (alpha, beta, gamma...), or for
// Clip from optional inputs. Gelu and Tanh in float run on oneDNN
// (onednn/plain_primitive.hpp), whose vector erf and tanh the loops here cannot
// match at baseline x86-64; its exp, log and logistic are less accurate than
// vector_math.hpp's (tests/cpu_ep/vector_math_test.cpp), so those stay here.
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "cpu_kernel.hpp"
#include "isa_clones.hpp"
#include "onednn/plain_primitive_kernel.hpp"
#include "vector_math.hpp"

namespace nxrt::cpu {
namespace {

struct UnaryParams {
  double alpha = 0;
  double beta = 0;
  double gamma = 0;
  bool flag_a = false;
  bool flag_b = false;
};

using UnaryFn = void (*)(const nxrt_tensor& in, nxrt_tensor& out, const UnaryParams& params);

template <typename T, typename Op>
NXRT_ISA_CLONES void RunUnary(const nxrt_tensor& in, nxrt_tensor& out, const UnaryParams& params) {
  using C = ComputeType<T>;
  const T* x = DataAs<T>(in);
  using Out = decltype(Op::template Output<T>());
  Out* y = MutableDataAs<Out>(out);
  const Op op{params};
  const int64_t n = ElementCount(in);
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<Out>(op(static_cast<C>(x[i])));
}

// An op maps C to C (stored back as T) unless it declares another output.
#define NXRT_SAME_OUTPUT \
  template <typename T>  \
  static T Output();
#define NXRT_BOOL_OUTPUT \
  template <typename T>  \
  static bool Output();

#define NXRT_FLOAT_OP(Name, expr)  \
  struct Name {                    \
    UnaryParams p;                 \
    NXRT_SAME_OUTPUT               \
    template <typename C>          \
    C operator()(C x) const {      \
      return static_cast<C>(expr); \
    }                              \
  };

NXRT_FLOAT_OP(Exp, math::Exp(x))
NXRT_FLOAT_OP(Log, std::log(x))
NXRT_FLOAT_OP(Sqrt, std::sqrt(x))
NXRT_FLOAT_OP(Reciprocal, C(1) / x)
NXRT_FLOAT_OP(Floor, std::floor(x))
NXRT_FLOAT_OP(Ceil, std::ceil(x))
NXRT_FLOAT_OP(Round, std::nearbyint(x))
NXRT_FLOAT_OP(Sin, std::sin(x))
NXRT_FLOAT_OP(Cos, std::cos(x))
NXRT_FLOAT_OP(Tan, std::tan(x))
NXRT_FLOAT_OP(Asin, std::asin(x))
NXRT_FLOAT_OP(Acos, std::acos(x))
NXRT_FLOAT_OP(Atan, std::atan(x))
NXRT_FLOAT_OP(Sinh, std::sinh(x))
NXRT_FLOAT_OP(Cosh, std::cosh(x))
NXRT_FLOAT_OP(Tanh, std::tanh(x))
NXRT_FLOAT_OP(Asinh, std::asinh(x))
NXRT_FLOAT_OP(Acosh, std::acosh(x))
NXRT_FLOAT_OP(Atanh, std::atanh(x))
NXRT_FLOAT_OP(Erf, math::Erf(x))
NXRT_FLOAT_OP(Sigmoid, math::Sigmoid(x))
NXRT_FLOAT_OP(HardSigmoid, std::max(C(0), std::min(C(1), C(p.alpha) * x + C(p.beta))))
NXRT_FLOAT_OP(LeakyRelu, x < 0 ? C(p.alpha) * x : x)
NXRT_FLOAT_OP(Elu, x < 0 ? C(p.alpha) * (std::exp(x) - C(1)) : x)
NXRT_FLOAT_OP(Selu, x > 0 ? C(p.gamma) * x : C(p.gamma) * (C(p.alpha) * std::exp(x) - C(p.alpha)))
NXRT_FLOAT_OP(Celu,
              std::max(C(0), x) + std::min(C(0), C(p.alpha) * (std::exp(x / C(p.alpha)) - C(1))))
NXRT_FLOAT_OP(Softplus, x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)))
NXRT_FLOAT_OP(Softsign, x / (C(1) + std::abs(x)))
NXRT_FLOAT_OP(Swish, x* math::Sigmoid(C(p.alpha) * x))
NXRT_FLOAT_OP(HardSwish, x* std::max(C(0), std::min(C(1), x / C(6) + C(0.5))))
NXRT_FLOAT_OP(Mish, x* std::tanh(x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x))))
NXRT_FLOAT_OP(ThresholdedRelu, x > C(p.alpha) ? x : C(0))
NXRT_FLOAT_OP(GeluErf, C(0.5) * x * (C(1) + math::Erf(x * C(M_SQRT1_2))))
NXRT_FLOAT_OP(GeluTanh,
              C(0.5) * x *
                  (C(1) + std::tanh(std::sqrt(C(2) / C(M_PI)) * (x + C(0.044715) * x * x * x))))
#undef NXRT_FLOAT_OP

struct Abs {
  UnaryParams p;
  NXRT_SAME_OUTPUT
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else {
      return static_cast<C>(x < 0 ? -x : x);
    }
  }
};

struct Neg {
  UnaryParams p;
  NXRT_SAME_OUTPUT
  template <typename C>
  C operator()(C x) const {
    return static_cast<C>(-x);
  }
};

struct Sign {
  UnaryParams p;
  NXRT_SAME_OUTPUT
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) {
      return static_cast<C>(x > 0 ? 1 : 0);
    } else {
      return static_cast<C>(x > 0 ? 1 : (x < 0 ? -1 : 0));
    }
  }
};

struct Relu {
  UnaryParams p;
  NXRT_SAME_OUTPUT
  template <typename C>
  C operator()(C x) const {
    return x < C(0) ? C(0) : x;  // NaN stays NaN, as in max(0, x) of the ONNX reference
  }
};

struct Shrink {
  UnaryParams p;  // alpha: lambd, beta: bias
  NXRT_SAME_OUTPUT
  template <typename C>
  C operator()(C x) const {
    const double v = static_cast<double>(x);
    if (v < -p.alpha) return static_cast<C>(v + p.beta);
    if (v > p.alpha) return static_cast<C>(v - p.beta);
    return C(0);
  }
};

struct Not {
  UnaryParams p;
  NXRT_SAME_OUTPUT
  bool operator()(bool x) const { return !x; }
};

struct BitwiseNot {
  UnaryParams p;
  NXRT_SAME_OUTPUT
  template <typename C>
  C operator()(C x) const {
    return static_cast<C>(~x);
  }
};

struct IsNaN {
  UnaryParams p;
  NXRT_BOOL_OUTPUT
  template <typename C>
  bool operator()(C x) const {
    return std::isnan(x);
  }
};

struct IsInf {
  UnaryParams p;  // flag_a: detect_negative, flag_b: detect_positive
  NXRT_BOOL_OUTPUT
  template <typename C>
  bool operator()(C x) const {
    return std::isinf(x) && (x < 0 ? p.flag_a : p.flag_b);
  }
};

#undef NXRT_SAME_OUTPUT
#undef NXRT_BOOL_OUTPUT

class UnaryKernel : public CpuKernel {
 public:
  // `serves_other_shapes`: false where other shapes of the node would take
  // another kernel (oneDNN's, for a float tensor that is not empty).
  UnaryKernel(UnaryFn fn, UnaryParams params, nxrt_dtype out_dtype, bool serves_other_shapes)
      : CpuKernel(true),
        fn_(fn),
        params_(params),
        out_dtype_(out_dtype),
        serves_other_shapes_(serves_other_shapes) {}
  bool ServesOtherShapes() const override { return serves_other_shapes_; }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, out_dtype_, DimsSpan(in));
    fn_(in, out, params_);
  }

 private:
  UnaryFn fn_;
  UnaryParams params_;
  nxrt_dtype out_dtype_;
  bool serves_other_shapes_;
};

using ParamsFn = UnaryParams (*)(const sdk::Node&);
UnaryParams NoParams(const sdk::Node&) {
  return {};
}

// `onednn`: the oneDNN algorithm computing the op in float (with the op's
// alpha and beta), when there is one.
template <typename Op, typename List>
void AddUnary(OpRegistry& registry, const char* name, List list, ParamsFn read = NoParams,
              std::optional<dnnl::algorithm> onednn = std::nullopt, const char* domain = "") {
  registry.Add(
      name,
      {1, ClaimInputDtype(list),
       [list, read, name, onednn](const sdk::Node& node, std::span<const nxrt_shape> inputs,
                                  int64_t) -> std::unique_ptr<CpuKernel> {
         const nxrt_dtype dtype = inputs[0].dtype;
         const UnaryParams params = read(node);
         const Dims dims(inputs[0].dims, inputs[0].dims + inputs[0].rank);
         if (onednn && dtype == NXRT_DTYPE_FLOAT32 && ElementCount(dims) > 0) {
           if (auto eltwise =
                   onednn::PlanEltwise(*onednn, static_cast<float>(params.alpha),
                                       static_cast<float>(params.beta), ElementCount(dims))) {
             return std::make_unique<PlainPrimitiveKernel>(std::move(*eltwise), dims);
           }
         }
         nxrt_dtype out_dtype = dtype;
         UnaryFn fn = Dispatch(list, dtype, name, [&](auto tag) -> UnaryFn {
           using T = typename decltype(tag)::type;
           out_dtype = kDtypeOf<decltype(Op::template Output<T>())>;
           return &RunUnary<T, Op>;
         });
         const bool onednn_elsewhere = onednn && dtype == NXRT_DTYPE_FLOAT32;
         return std::make_unique<UnaryKernel>(fn, params, out_dtype, !onednn_elsewhere);
       }},
      domain);
}

// Clip: bounds from attributes before opset 11, from optional inputs after.
class ClipKernel : public CpuKernel {
 public:
  ClipKernel(nxrt_dtype dtype, int64_t opset, const sdk::Node& node)
      : CpuKernel(true), dtype_(dtype), opset_(opset) {
    if (opset < 11) {
      min_ = node.AttrFloat("min", -std::numeric_limits<float>::infinity());
      max_ = node.AttrFloat("max", std::numeric_limits<float>::infinity());
    }
  }

  bool ServesOtherShapes() const override { return true; }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, DimsSpan(in));
    Dispatch(NumericTypes{}, dtype_, "Clip", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      C lo = std::numeric_limits<C>::lowest();
      C hi = std::numeric_limits<C>::max();
      if (opset_ < 11) {
        lo = static_cast<C>(std::max<double>(min_, static_cast<double>(lo)));
        hi = static_cast<C>(std::min<double>(max_, static_cast<double>(hi)));
      } else {
        if (IsPresent(inputs, 1) && ElementCount(inputs[1].tensor) > 0) {
          lo = static_cast<C>(*DataAs<T>(inputs[1].tensor));
        }
        if (IsPresent(inputs, 2) && ElementCount(inputs[2].tensor) > 0) {
          hi = static_cast<C>(*DataAs<T>(inputs[2].tensor));
        }
      }
      const T* x = DataAs<T>(in);
      T* y = MutableDataAs<T>(out);
      const int64_t n = ElementCount(in);
      for (int64_t i = 0; i < n; ++i) {
        // min(max(x, lo), hi): when lo > hi every element becomes hi.
        const C v = static_cast<C>(x[i]);
        const C raised = v < lo ? lo : v;
        y[i] = static_cast<T>(raised > hi ? hi : raised);
      }
    });
  }

 private:
  nxrt_dtype dtype_;
  int64_t opset_;
  double min_ = 0;
  double max_ = 0;
};

UnaryParams Alpha(const sdk::Node& node, float fallback) {
  UnaryParams p;
  p.alpha = node.AttrFloat("alpha", fallback);
  return p;
}

}  // namespace

void RegisterUnaryOps(OpRegistry& r) {
  AddUnary<Abs>(r, "Abs", NumericTypes{});
  AddUnary<Neg>(r, "Neg", SignedTypes{});
  AddUnary<Sign>(r, "Sign", NumericTypes{});
  AddUnary<Relu>(r, "Relu", SignedTypes{});
  AddUnary<Exp>(r, "Exp", FloatTypes{});
  AddUnary<Log>(r, "Log", FloatTypes{});
  AddUnary<Sqrt>(r, "Sqrt", FloatTypes{});
  AddUnary<Reciprocal>(r, "Reciprocal", FloatTypes{});
  AddUnary<Floor>(r, "Floor", FloatTypes{});
  AddUnary<Ceil>(r, "Ceil", FloatTypes{});
  AddUnary<Round>(r, "Round", FloatTypes{});
  AddUnary<Sin>(r, "Sin", FloatTypes{});
  AddUnary<Cos>(r, "Cos", FloatTypes{});
  AddUnary<Tan>(r, "Tan", FloatTypes{});
  AddUnary<Asin>(r, "Asin", FloatTypes{});
  AddUnary<Acos>(r, "Acos", FloatTypes{});
  AddUnary<Atan>(r, "Atan", FloatTypes{});
  AddUnary<Sinh>(r, "Sinh", FloatTypes{});
  AddUnary<Cosh>(r, "Cosh", FloatTypes{});
  AddUnary<Tanh>(r, "Tanh", FloatTypes{}, NoParams, dnnl::algorithm::eltwise_tanh);
  AddUnary<Asinh>(r, "Asinh", FloatTypes{});
  AddUnary<Acosh>(r, "Acosh", FloatTypes{});
  AddUnary<Atanh>(r, "Atanh", FloatTypes{});
  AddUnary<Erf>(r, "Erf", FloatTypes{});
  AddUnary<Sigmoid>(r, "Sigmoid", FloatTypes{});
  AddUnary<Softplus>(r, "Softplus", FloatTypes{});
  AddUnary<Softsign>(r, "Softsign", FloatTypes{});
  AddUnary<HardSwish>(r, "HardSwish", FloatTypes{});
  // The host's fusion of Add, Clip, Mul and Div (partitioner/hard_swish_fusion.hpp).
  AddUnary<HardSwish>(r, "HardSwish", FloatTypes{}, NoParams, std::nullopt, "pkg.nxrt");
  AddUnary<Mish>(r, "Mish", FloatTypes{});
  AddUnary<IsNaN>(r, "IsNaN", FloatTypes{});
  AddUnary<Not>(r, "Not", TypeList<bool>{});
  AddUnary<BitwiseNot>(r, "BitwiseNot", IntTypes{});
  AddUnary<HardSigmoid>(r, "HardSigmoid", FloatTypes{}, [](const sdk::Node& node) {
    UnaryParams p = Alpha(node, 0.2f);
    p.beta = node.AttrFloat("beta", 0.5f);
    return p;
  });
  AddUnary<LeakyRelu>(r, "LeakyRelu", FloatTypes{},
                      [](const sdk::Node& node) { return Alpha(node, 0.01f); });
  AddUnary<Swish>(r, "Swish", FloatTypes{},
                  [](const sdk::Node& node) { return Alpha(node, 1.0f); });
  // The host's fusion of Sigmoid and Mul (partitioner/swish_fusion.hpp).
  AddUnary<Swish>(
      r, "Swish", FloatTypes{}, [](const sdk::Node& node) { return Alpha(node, 1.0f); },
      std::nullopt, "pkg.nxrt");
  AddUnary<Elu>(r, "Elu", FloatTypes{}, [](const sdk::Node& node) { return Alpha(node, 1.0f); });
  AddUnary<Celu>(r, "Celu", FloatTypes{}, [](const sdk::Node& node) { return Alpha(node, 1.0f); });
  AddUnary<ThresholdedRelu>(r, "ThresholdedRelu", FloatTypes{},
                            [](const sdk::Node& node) { return Alpha(node, 1.0f); });
  AddUnary<Selu>(r, "Selu", FloatTypes{}, [](const sdk::Node& node) {
    UnaryParams p = Alpha(node, 1.67326319217681884765625f);
    p.gamma = node.AttrFloat("gamma", 1.05070102214813232421875f);
    return p;
  });
  AddUnary<Shrink>(r, "Shrink", NumericTypes{}, [](const sdk::Node& node) {
    UnaryParams p;
    p.alpha = node.AttrFloat("lambd", 0.5f);
    p.beta = node.AttrFloat("bias", 0.0f);
    return p;
  });
  AddUnary<IsInf>(r, "IsInf", FloatTypes{}, [](const sdk::Node& node) {
    UnaryParams p;
    p.flag_a = node.AttrInt("detect_negative", 1) != 0;
    p.flag_b = node.AttrInt("detect_positive", 1) != 0;
    return p;
  });

  OpRegistry gelu_forms;
  AddUnary<GeluErf>(gelu_forms, "none", FloatTypes{}, NoParams, dnnl::algorithm::eltwise_gelu_erf);
  AddUnary<GeluTanh>(gelu_forms, "tanh", FloatTypes{}, NoParams,
                     dnnl::algorithm::eltwise_gelu_tanh);
  // ONNX's since opset 20, and the host's fusion of the erf form exporters
  // spell out before it (partitioner/gelu_fusion.hpp).
  for (const auto& [domain, since] : {std::pair{"", 20}, std::pair{"pkg.nxrt", 1}}) {
    r.Add("Gelu",
          {since,
           [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
             const std::string approximate = node.AttrString("approximate", "none");
             if (approximate != "none" && approximate != "tanh") {
               return sdk::ClaimResult::Declined(
                   "Gelu: approximate=" + approximate +
                   " is neither of the forms this EP computes, none and tanh; use one of those");
             }
             return ClaimUnless(CheckInputDtype(node, inputs, 0, FloatTypes{}));
           },
           [gelu_forms](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t opset) {
             return gelu_forms.Find("", node.AttrString("approximate", "none"))
                 ->create(node, inputs, opset);
           }},
          domain);
  }

  r.Add("Clip", {1, ClaimInputDtype(NumericTypes{}),
                 [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t opset) {
                   return std::make_unique<ClipKernel>(inputs[0].dtype, opset, node);
                 }});
}

}  // namespace nxrt::cpu
