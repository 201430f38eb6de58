// pkg.nxrt ConvPool: a float 2-D Conv of a multiple of 16 maps, its Relu
// when "activation" is "Relu", and the max pooling of the result (the
// MaxPool's attributes with a "pool_" prefix). The host fuses the nodes into
// it when this EP claims it (core/src/partitioner/conv_fusion.hpp); it runs
// on oneDNN end to end, pooling the convolution's blocked output in place
// (onednn/float_conv_pool.hpp).
#include <memory>
#include <optional>
#include <string>

#include "cpu_kernel.hpp"
#include "onednn/float_conv_pool.hpp"
#include "window_geometry.hpp"

namespace nxrt::cpu {
namespace {

class ConvPoolKernel : public CpuKernel {
 public:
  ConvPoolKernel(const sdk::Node& node, std::span<const nxrt_shape> inputs) : CpuKernel(false) {
    const Dims x(inputs[0].dims, inputs[0].dims + inputs[0].rank);
    const Dims w(inputs[1].dims, inputs[1].dims + inputs[1].rank);
    if (x.size() != 4 || w.size() != 4) FailInvalid("ConvPool: X and W need rank 4");
    const int64_t group = node.AttrInt("group", 1);
    if (group <= 0 || x[1] % group != 0 || w[0] % group != 0 || w[1] * group != x[1]) {
      FailInvalid("ConvPool: channels do not split into groups");
    }
    onednn::ConvolutionShape conv;
    conv.batch = x[0];
    conv.channels = x[1];
    conv.maps = w[0];
    conv.group = group;
    conv.geometry = ResolveWindow(WindowAttributes::Read(node), Dims(x.begin() + 2, x.end()),
                                  Dims(w.begin() + 2, w.end()), "ConvPool");
    conv.bias = inputs.size() > 2 && inputs[2].dtype != NXRT_DTYPE_UNDEFINED;
    RequireElements(inputs, 2, conv.maps, "ConvPool", "B, one value per output map");
    if (node.AttrString("activation", "") == "Relu") {
      conv.activation.kind = onednn::PostActivation::Kind::kRelu;
    }
    const WindowAttributes pool_attributes = WindowAttributes::Read(node, "pool_");
    const WindowGeometry pool =
        ResolveWindow(pool_attributes, conv.geometry.out, pool_attributes.kernel_shape, "ConvPool");
    out_dims_ = {conv.batch, conv.maps, pool.out[0], pool.out[1]};
    if (ElementCount(out_dims_) == 0) return;
    plan_ = onednn::FloatConvPool::Plan(conv, pool);
    if (!plan_) {
      FailUnsupported(
          "ConvPool: oneDNN has no plan for these shapes; run with graph rewrites off "
          "(SessionOptions::rewrite_graph, --no-rewrites) to keep the nodes apart");
    }
  }

  void PrepareConstantInputs(std::span<const nxrt_constant_input> constants) override {
    for (const nxrt_constant_input& c : constants) {
      if (c.input_index == 1 && plan_) {
        weights_ = plan_->convolution().PrepareWeights(static_cast<const float*>(c.bytes));
      }
    }
  }
  std::shared_ptr<sdk::SharedState> ShareableConstantState() override { return weights_; }
  bool AdoptShareableConstantState(const std::shared_ptr<sdk::SharedState>& state) override {
    auto weights = std::dynamic_pointer_cast<onednn::PreparedWeights>(state);
    if (!weights || !plan_ || !plan_->convolution().Takes(*weights)) return false;
    weights_ = std::move(weights);
    return true;
  }
  // Only weights reordered on each call allocate (their buffer, once).
  bool CaptureSafe() const override { return weights_ != nullptr; }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_FLOAT32, out_dims_);
    if (!plan_) return;  // an empty result
    plan_->Run(DataAs<float>(inputs[0].tensor), DataAs<float>(inputs[1].tensor), weights_.get(),
               IsPresent(inputs, 2) ? DataAs<float>(inputs[2].tensor) : nullptr,
               MutableDataAs<float>(out));
  }

 private:
  Dims out_dims_;
  std::optional<onednn::FloatConvPool> plan_;
  std::shared_ptr<onednn::PreparedWeights> weights_;  // constant W, prepared for plan_
};

sdk::ClaimResult ClaimConvPool(const sdk::Node& node, int64_t,
                               std::span<const nxrt_value_info> inputs) {
  const std::string activation = node.AttrString("activation", "");
  if (!activation.empty() && activation != "Relu") {
    return sdk::ClaimResult::Declined("ConvPool: activation '" + activation +
                                      "' not implemented (Relu is)");
  }
  for (const char* auto_pad : {"auto_pad", "pool_auto_pad"}) {
    const std::string value = node.AttrString(auto_pad, "NOTSET");
    if (value != "NOTSET" && value != "VALID" && value != "SAME_UPPER" && value != "SAME_LOWER") {
      return sdk::ClaimResult::Declined(std::string("ConvPool: ") + auto_pad + "=" + value +
                                        " not implemented");
    }
  }
  if (auto reason = CheckInputDtype(node, inputs, 0, TypeList<float>{})) {
    return sdk::ClaimResult::Declined(*reason);
  }
  const nxrt_value_info& w = inputs[1];
  if (w.rank != 4 || w.dims[0].value <= 0 || w.dims[0].value % 16 != 0) {
    return sdk::ClaimResult::Declined(
        "ConvPool: runs 2-D convolutions of a multiple of 16 maps on 16-channel blocks");
  }
  return sdk::ClaimResult::Claimed();
}

}  // namespace

void RegisterConvPoolOps(OpRegistry& r) {
  r.Add("ConvPool",
        {1, ClaimConvPool,
         [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
           return std::make_unique<ConvPoolKernel>(node, inputs);
         }},
        "pkg.nxrt");
}

}  // namespace nxrt::cpu
