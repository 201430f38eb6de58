// The optimizer steps of ai.onnx.preview.training: Adagrad, Adam and
// Momentum (standard and Nesterov). Each takes the learning rate R and the
// step count T, then n tensors X, n gradients G and the n (Adam: 2n)
// accumulators of its state, and gives the n updated X and their updated
// state, every tensor float or double. Each element is worked out in double,
// as the ONNX reference does, and stored in the tensor's own dtype. One
// kernel serves one step: R and T are read on each run.
#include <array>
#include <cmath>
#include <memory>
#include <string>

#include "cpu_kernel.hpp"

namespace nxrt::cpu {
namespace {

constexpr const char* kTraining = "ai.onnx.preview.training";

// One element's step: reads x, g and the state, writes the new x and state.
struct AdagradStep {
  double decay_factor, epsilon, norm_coefficient;
  double rate = 0;

  void Begin(double r, int64_t t) { rate = r / (1 + static_cast<double>(t) * decay_factor); }
  void operator()(double x, double g, double* state, double& x_new) const {
    const double regularized = norm_coefficient * x + g;
    state[0] += regularized * regularized;
    x_new = x - rate * regularized / (std::sqrt(state[0]) + epsilon);
  }
};

struct AdamStep {
  double alpha, beta, epsilon, norm_coefficient, norm_coefficient_post;
  double rate = 0;

  void Begin(double r, int64_t t) {
    // Bias correction of both moments from the first counted step on.
    const double steps = static_cast<double>(t);
    rate = t > 0 ? r * std::sqrt(1 - std::pow(beta, steps)) / (1 - std::pow(alpha, steps)) : r;
  }
  void operator()(double x, double g, double* state, double& x_new) const {
    const double regularized = norm_coefficient * x + g;
    state[0] = alpha * state[0] + (1 - alpha) * regularized;
    state[1] = beta * state[1] + (1 - beta) * regularized * regularized;
    const double moved = x - rate * (state[0] / (std::sqrt(state[1]) + epsilon));
    x_new = (1 - norm_coefficient_post) * moved;
  }
};

struct MomentumStep {
  double alpha, beta, norm_coefficient;
  bool nesterov;
  double rate = 0;
  double gradient_weight = 0;

  void Begin(double r, int64_t t) {
    rate = r;
    gradient_weight = t > 0 ? beta : 1;  // the first step takes the whole gradient
  }
  void operator()(double x, double g, double* state, double& x_new) const {
    const double regularized = norm_coefficient * x + g;
    state[0] = alpha * state[0] + gradient_weight * regularized;
    x_new = x - rate * (nesterov ? regularized + alpha * state[0] : state[0]);
  }
};

// Runs `Step` over every tensor of the node; `states` accumulators per X.
template <typename Step>
class OptimizerKernel : public CpuKernel {
 public:
  OptimizerKernel(const std::string& op, Step step, size_t states)
      : CpuKernel(true), op_(op), step_(step), states_(states) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const size_t groups = 1 + states_;  // X's companions: G and each state
    if (inputs.size() < 2 || (inputs.size() - 2) % (groups + 1) != 0) {
      FailInvalid(op_ + ": expects R, T, then n X, n G and " + std::to_string(states_) +
                  "n state tensors; got " + std::to_string(inputs.size()) + " inputs");
    }
    const size_t n = (inputs.size() - 2) / (groups + 1);
    if (outputs.size() > n * groups) {
      FailInvalid(op_ + ": " + std::to_string(outputs.size()) + " outputs for " +
                  std::to_string(n) + " tensors");
    }
    Step step = step_;
    step.Begin(ReadScalar(inputs[0].tensor), static_cast<int64_t>(ReadScalar(inputs[1].tensor)));
    for (size_t i = 0; i < n; ++i) Update(ctx, inputs, outputs, step, n, i);
  }

 private:
  const nxrt_tensor& In(std::span<const nxrt_value> inputs, size_t n, size_t group,
                        size_t i) const {
    return inputs[2 + group * n + i].tensor;
  }

  void Update(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
              std::span<nxrt_value> outputs, const Step& step, size_t n, size_t i) {
    const nxrt_tensor& x = In(inputs, n, 0, i);
    const std::span<const int64_t> dims = DimsSpan(x);
    for (size_t group = 1; group <= 1 + states_; ++group) {
      const nxrt_tensor& t = In(inputs, n, group, i);
      if (t.dtype != x.dtype || !DimsEqual(DimsSpan(t), dims)) {
        FailInvalid(op_ + ": input " + std::to_string(2 + group * n + i) + " is " +
                    DimsText(DimsSpan(t)) + " but its X is " + DimsText(dims) +
                    "; every G and state tensor must match its X in shape and dtype");
      }
    }
    Dispatch(TypeList<float, double>{}, x.dtype, op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      // Output k * n + i is the new X (k = 0) or the new state k.
      std::array<T*, 3> out{};
      for (size_t k = 0; k <= states_; ++k) {
        if (k * n + i < outputs.size() && outputs[k * n + i].kind != NXRT_VALUE_NONE) {
          out[k] = MutableDataAs<T>(PrepareOutput(ctx, outputs, k * n + i, x.dtype, dims));
        }
      }
      const T* xs = DataAs<T>(x);
      const T* gs = DataAs<T>(In(inputs, n, 1, i));
      const int64_t count = ElementCount(dims);
      for (int64_t e = 0; e < count; ++e) {
        double state[2] = {};
        for (size_t k = 0; k < states_; ++k) state[k] = DataAs<T>(In(inputs, n, 2 + k, i))[e];
        double x_new = 0;
        step(xs[e], gs[e], state, x_new);
        if (out[0]) out[0][e] = static_cast<T>(x_new);
        for (size_t k = 0; k < states_; ++k) {
          if (out[1 + k]) out[1 + k][e] = static_cast<T>(state[k]);
        }
      }
    });
  }

  std::string op_;
  Step step_;
  size_t states_;
};

// R a float or double scalar, T an int64 scalar, every other input float or
// double.
sdk::ClaimResult ClaimOptimizer(const sdk::Node& node, int64_t,
                                std::span<const nxrt_value_info> inputs) {
  if (auto reason = CheckInputDtype(node, inputs, 0, TypeList<float, double>{})) {
    return sdk::ClaimResult::Declined(*reason);
  }
  if (auto reason = CheckInputDtype(node, inputs, 1, TypeList<int64_t>{})) {
    return sdk::ClaimResult::Declined(*reason);
  }
  for (size_t i = 2; i < inputs.size(); ++i) {
    if (auto reason = CheckInputDtype(node, inputs, i, TypeList<float, double>{})) {
      return sdk::ClaimResult::Declined(*reason);
    }
  }
  return sdk::ClaimResult::Claimed();
}

// Momentum's attributes have no defaults.
sdk::ClaimResult ClaimMomentum(const sdk::Node& node, int64_t opset,
                               std::span<const nxrt_value_info> inputs) {
  for (const char* name : {"alpha", "beta", "mode", "norm_coefficient"}) {
    if (node.attr_type(name) == NXRT_ATTR_UNDEFINED) {
      return sdk::ClaimResult::Declined(std::string("Momentum: attribute '") + name +
                                        "' is required");
    }
  }
  const std::string mode = node.AttrString("mode", "standard");
  if (mode != "standard" && mode != "nesterov") {
    return sdk::ClaimResult::Declined("Momentum: mode '" + mode +
                                      "' is neither 'standard' nor 'nesterov'");
  }
  return ClaimOptimizer(node, opset, inputs);
}

}  // namespace

void RegisterOptimizerOps(OpRegistry& r) {
  r.Add("Adagrad",
        {1, ClaimOptimizer,
         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
           const AdagradStep step{node.AttrFloat("decay_factor", 0.0f),
                                  node.AttrFloat("epsilon", 0.0f),
                                  node.AttrFloat("norm_coefficient", 0.0f)};
           return std::make_unique<OptimizerKernel<AdagradStep>>("Adagrad", step, 1);
         }},
        kTraining);
  r.Add("Adam",
        {1, ClaimOptimizer,
         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
           const AdamStep step{node.AttrFloat("alpha", 0.9f), node.AttrFloat("beta", 0.999f),
                               node.AttrFloat("epsilon", 0.0f),
                               node.AttrFloat("norm_coefficient", 0.0f),
                               node.AttrFloat("norm_coefficient_post", 0.0f)};
           return std::make_unique<OptimizerKernel<AdamStep>>("Adam", step, 2);
         }},
        kTraining);
  r.Add("Momentum",
        {1, ClaimMomentum,
         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
           const MomentumStep step{node.AttrFloat("alpha", 0.0f), node.AttrFloat("beta", 0.0f),
                                   node.AttrFloat("norm_coefficient", 0.0f),
                                   node.AttrString("mode", "standard") == "nesterov"};
           return std::make_unique<OptimizerKernel<MomentumStep>>("Momentum", step, 1);
         }},
        kTraining);
}

}  // namespace nxrt::cpu
