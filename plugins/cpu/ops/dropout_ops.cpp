// Dropout. At inference (no training_mode input or it is false, is_test set
// before opset 7, or a ratio of 0) the output is the input and the mask is all
// true. In training each element is kept with probability 1 - ratio and scaled
// by 1 / (1 - ratio). The draws come from MT19937 turned into 53-bit doubles
// in [0, 1), so a given seed always gives the same mask (the same stream as
// numpy's legacy generator); without a seed the generator is seeded randomly
// once per kernel.
#include <random>

#include "cpu_kernel.hpp"

namespace nxrt::cpu {
namespace {

double UniformDouble(std::mt19937& engine) {
  const uint32_t high = engine() >> 5;
  const uint32_t low = engine() >> 6;
  return (high * 67108864.0 + low) / 9007199254740992.0;
}

// ratio and training_mode are single values.
void CheckScalar(const nxrt_tensor& t, const char* name) {
  if (ElementCount(t) != 1) {
    FailInvalid(std::string("Dropout: ") + name + " holds " + std::to_string(ElementCount(t)) +
                " values; it is one");
  }
}

double ScalarOf(const nxrt_tensor& t) {
  CheckScalar(t, "ratio");
  return Dispatch(FloatTypes{}, t.dtype, "Dropout", [&](auto tag) {
    using T = typename decltype(tag)::type;
    return static_cast<double>(static_cast<ComputeType<T>>(*DataAs<T>(t)));
  });
}

class DropoutKernel : public CpuKernel {
 public:
  // Capture-safe unless it may draw: replays would repeat one mask.
  DropoutKernel(double ratio, bool training, std::optional<int64_t> seed, bool training_input)
      : CpuKernel(!training && !training_input), ratio_(ratio), training_(training), seed_(seed) {
    if (!seed_) engine_.seed(std::random_device{}());
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const std::span<const int64_t> dims = DimsSpan(x);
    const double ratio = IsPresent(inputs, 1) ? ScalarOf(inputs[1].tensor) : ratio_;
    if (IsPresent(inputs, 2)) CheckScalar(inputs[2].tensor, "training_mode");
    const bool training = IsPresent(inputs, 2) ? *DataAs<bool>(inputs[2].tensor) : training_;
    bool* mask = nullptr;
    if (outputs.size() > 1 && outputs[1].kind == NXRT_VALUE_TENSOR) {
      mask = MutableDataAs<bool>(PrepareOutput(ctx, outputs, 1, NXRT_DTYPE_BOOL, dims));
    }
    const int64_t n = ElementCount(dims);
    if (!training || ratio == 0) {
      WriteCopy(ctx, outputs, 0, x, dims);
      if (mask) std::fill_n(mask, n, true);
      return;
    }
    if (ratio < 0 || ratio >= 1) {
      FailInvalid("Dropout: ratio " + std::to_string(ratio) + " outside [0, 1)");
    }
    if (seed_) engine_.seed(static_cast<uint32_t>(*seed_));
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, x.dtype, dims);
    Dispatch(FloatTypes{}, x.dtype, "Dropout", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const T* xp = DataAs<T>(x);
      T* y = MutableDataAs<T>(out);
      const C scale = static_cast<C>(1.0 / (1.0 - ratio));
      for (int64_t i = 0; i < n; ++i) {
        const bool keep = UniformDouble(engine_) >= ratio;
        y[i] = keep ? static_cast<T>(static_cast<C>(xp[i]) * scale) : static_cast<T>(C(0));
        if (mask) mask[i] = keep;
      }
    });
  }

 private:
  double ratio_;
  bool training_;
  std::optional<int64_t> seed_;
  std::mt19937 engine_;
};

}  // namespace

void RegisterDropoutOps(OpRegistry& r) {
  r.Add("Dropout",
        {1,
         [](const sdk::Node& node, int64_t opset, std::span<const nxrt_value_info> inputs) {
           if (inputs.empty() || inputs[0].kind != NXRT_VALUE_TENSOR) {
             return sdk::ClaimResult::Declined("Dropout: input 0 must be a tensor");
           }
           const bool may_train = (inputs.size() > 2 && inputs[2].kind != NXRT_VALUE_NONE) ||
                                  (opset < 7 && node.AttrInt("is_test", 0) == 0);
           if (may_train) return ClaimUnless(CheckInputDtype(node, inputs, 0, FloatTypes{}));
           return ClaimUnless(CheckInputDtype(node, inputs, 0, AllTypes{}));
         },
         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t opset) {
           std::optional<int64_t> seed;
           if (node.attr_type("seed") != NXRT_ATTR_UNDEFINED) seed = node.AttrInt("seed", 0);
           const bool training_input =
               node.input_count() > 2 && node.input_info(2).kind != NXRT_VALUE_NONE;
           return std::make_unique<DropoutKernel>(node.AttrFloat("ratio", 0.5f),
                                                  opset < 7 && node.AttrInt("is_test", 0) == 0,
                                                  seed, training_input);
         }});
}

}  // namespace nxrt::cpu
