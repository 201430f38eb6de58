#include "ops/linear_before_reset_gru.hpp"

#include <cmath>
#include <optional>
#include <utility>

#include "onednn/float_gru.hpp"

namespace nxrt::cpu {
namespace {

enum GruInput : size_t { kX = 0, kW = 1, kR = 2, kB = 3, kInitialH = 5 };
enum GruOutput : size_t { kY = 0, kYH = 1 };

class LinearBeforeResetGruKernel : public CpuKernel {
 public:
  LinearBeforeResetGruKernel(onednn::FloatGru plan, bool bias_input, Dims y_dims, Dims state_dims)
      : CpuKernel(false),
        plan_(std::move(plan)),
        bias_input_(bias_input),
        y_dims_(std::move(y_dims)),
        state_dims_(std::move(state_dims)) {}

  // W, R and B are prepared once when all of them are constants.
  void PrepareConstantInputs(std::span<const nxrt_constant_input> constants) override {
    const float* w = nullptr;
    const float* r = nullptr;
    const float* b = nullptr;
    for (const nxrt_constant_input& c : constants) {
      const auto* bytes = static_cast<const float*>(c.bytes);
      if (c.input_index == kW) w = bytes;
      if (c.input_index == kR) r = bytes;
      if (c.input_index == kB) b = bytes;
    }
    if (w != nullptr && r != nullptr && (b != nullptr || !bias_input_)) {
      weights_ = plan_.PrepareWeights(w, r, b);
    }
  }
  std::shared_ptr<sdk::SharedState> ShareableConstantState() override { return weights_; }
  bool AdoptShareableConstantState(const std::shared_ptr<sdk::SharedState>& state) override {
    auto weights = std::dynamic_pointer_cast<onednn::GruWeights>(state);
    if (!weights || !plan_.Takes(*weights)) return false;
    weights_ = std::move(weights);
    return true;
  }
  // Weights that are not constant are prepared on every call.
  bool CaptureSafe() const override { return weights_ != nullptr; }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    std::shared_ptr<onednn::GruWeights> weights = weights_;
    if (!weights) {
      weights =
          plan_.PrepareWeights(DataAs<float>(inputs[kW].tensor), DataAs<float>(inputs[kR].tensor),
                               IsPresent(inputs, kB) ? DataAs<float>(inputs[kB].tensor) : nullptr);
    }
    plan_.Run(DataAs<float>(inputs[kX].tensor), *weights,
              IsPresent(inputs, kInitialH) ? DataAs<float>(inputs[kInitialH].tensor) : nullptr,
              Output(ctx, outputs, kY, y_dims_), Output(ctx, outputs, kYH, state_dims_));
  }

 private:
  // Output `index` ready to write, or null when the node leaves it out.
  static float* Output(sdk::ComputeContext& ctx, std::span<nxrt_value> outputs, size_t index,
                       const Dims& dims) {
    if (index >= outputs.size() || outputs[index].kind != NXRT_VALUE_TENSOR) return nullptr;
    return MutableDataAs<float>(PrepareOutput(ctx, outputs, index, NXRT_DTYPE_FLOAT32, dims));
  }

  onednn::FloatGru plan_;
  bool bias_input_;  // the node has B
  Dims y_dims_;
  Dims state_dims_;
  std::shared_ptr<onednn::GruWeights> weights_;
};

}  // namespace

std::unique_ptr<CpuKernel> MakeLinearBeforeResetGru(nxrt_dtype dtype, const LayerConfig& config,
                                                    const LayerDims& dims, bool bias,
                                                    bool sequence_lens, bool initial_h,
                                                    const Dims& y_dims, const Dims& state_dims) {
  const bool default_activations = config.activations.size() == 2 &&
                                   config.activations[0].kind == ActivationKind::kSigmoid &&
                                   config.activations[1].kind == ActivationKind::kTanh;
  if (dtype != NXRT_DTYPE_FLOAT32 || config.cell != CellKind::kGru || !config.linear_before_reset ||
      config.directions != 1 || config.batch_major || !std::isinf(config.clip) ||
      !default_activations || sequence_lens || dims.seq <= 0 || dims.batch <= 0 ||
      dims.input <= 0 || config.hidden <= 0) {
    return nullptr;
  }
  std::optional<onednn::FloatGru> plan = onednn::FloatGru::Plan(
      {dims.seq, dims.batch, dims.input, config.hidden, config.reverse, initial_h});
  if (!plan) return nullptr;
  return std::make_unique<LinearBeforeResetGruKernel>(std::move(*plan), bias, y_dims, state_dims);
}

}  // namespace nxrt::cpu
