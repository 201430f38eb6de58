// Classification losses: NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss (log-softmax over the class axis, then the same
// weighted negative log likelihood, with its optional log_prob output). Both
// honour class weights, ignore_index and the none/sum/mean reductions, where
// mean divides by the summed weights of the targets not ignored.
#include <algorithm>
#include <cmath>
#include <optional>

#include "cpu_kernel.hpp"

namespace nxrt::cpu {
namespace {

enum class LossReduction { kNone, kSum, kMean };

class LossKernel : public CpuKernel {
 public:
  LossKernel(bool softmax, nxrt_dtype dtype, LossReduction reduction,
             std::optional<int64_t> ignore_index)
      : CpuKernel(false),
        softmax_(softmax),
        dtype_(dtype),
        reduction_(reduction),
        ignore_index_(ignore_index) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& scores = inputs[0].tensor;
    const Dims dims = DimsOf(scores);
    if (dims.size() < 2) FailInvalid("loss: scores need rank 2 or more");
    const int64_t n = dims[0];
    const int64_t classes = dims[1];
    const int64_t inner = ElementCount(dims) / std::max<int64_t>(n * classes, 1);
    Dims target_dims = {n};
    target_dims.insert(target_dims.end(), dims.begin() + 2, dims.end());
    if (DimsOf(inputs[1].tensor) != target_dims) {
      FailInvalid("loss: the target's dims must be the scores' without the class axis (" +
                  DimsText(target_dims) + "), not " + DimsText(DimsOf(inputs[1].tensor)) +
                  "; fix the target's shape");
    }
    if (IsPresent(inputs, 2) && ElementCount(inputs[2].tensor) != classes) {
      FailInvalid("loss: the weights need one value per class (" + std::to_string(classes) +
                  "), not " + std::to_string(ElementCount(inputs[2].tensor)) +
                  "; fix the weights' shape");
    }
    const std::vector<int64_t> targets = ReadInt64s(inputs[1].tensor);
    Dispatch(FloatTypes{}, dtype_, "loss", [&](auto tag) {
      using T = typename decltype(tag)::type;
      auto at = [](const T* p, int64_t i) {
        return static_cast<double>(static_cast<ComputeType<T>>(p[i]));
      };
      const T* x = DataAs<T>(scores);
      const T* weights = IsPresent(inputs, 2) ? DataAs<T>(inputs[2].tensor) : nullptr;
      std::vector<double> log_prob(ElementCount(dims));
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t i = 0; i < inner; ++i) {
          auto index = [&](int64_t c) { return (b * classes + c) * inner + i; };
          double max = -INFINITY;
          if (softmax_) {
            for (int64_t c = 0; c < classes; ++c) max = std::max(max, at(x, index(c)));
          }
          double sum = 0;
          if (softmax_) {
            for (int64_t c = 0; c < classes; ++c) sum += std::exp(at(x, index(c)) - max);
          }
          for (int64_t c = 0; c < classes; ++c) {
            log_prob[index(c)] = softmax_ ? at(x, index(c)) - max - std::log(sum) : at(x, index(c));
          }
        }
      }
      Dims loss_dims = {n};
      loss_dims.insert(loss_dims.end(), dims.begin() + 2, dims.end());
      std::vector<double> loss(n * inner, 0.0);
      double weight_sum = 0;
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t target = targets[b * inner + i];
          if (ignore_index_ && target == *ignore_index_) continue;
          if (target < 0 || target >= classes) FailInvalid("loss: target out of range");
          const double w = weights ? at(weights, target) : 1.0;
          loss[b * inner + i] = -log_prob[(b * classes + target) * inner + i] * w;
          weight_sum += w;
        }
      }
      if (reduction_ == LossReduction::kNone) {
        T* y = MutableDataAs<T>(PrepareOutput(ctx, outputs, 0, dtype_, loss_dims));
        for (size_t i = 0; i < loss.size(); ++i)
          y[i] = static_cast<T>(static_cast<ComputeType<T>>(loss[i]));
      } else {
        double total = 0;
        for (double v : loss) total += v;
        if (reduction_ == LossReduction::kMean) total /= weight_sum;
        *MutableDataAs<T>(PrepareOutput(ctx, outputs, 0, dtype_, Dims{})) =
            static_cast<T>(static_cast<ComputeType<T>>(total));
      }
      if (softmax_ && outputs.size() > 1 && outputs[1].kind == NXRT_VALUE_TENSOR) {
        T* lp = MutableDataAs<T>(PrepareOutput(ctx, outputs, 1, dtype_, dims));
        for (size_t i = 0; i < log_prob.size(); ++i) {
          lp[i] = static_cast<T>(static_cast<ComputeType<T>>(log_prob[i]));
        }
      }
    });
  }

 private:
  bool softmax_;
  nxrt_dtype dtype_;
  LossReduction reduction_;
  std::optional<int64_t> ignore_index_;
};

void AddLoss(OpRegistry& r, const char* name, bool softmax, int64_t since) {
  r.Add(name, {since,
               [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
                 const std::string reduction = node.AttrString("reduction", "mean");
                 if (reduction != "none" && reduction != "sum" && reduction != "mean") {
                   return sdk::ClaimResult::Declined(std::string(node.op_type()) + ": reduction=" +
                                                     reduction + " not implemented");
                 }
                 if (auto reason = CheckInputDtype(node, inputs, 1, IndexTypes{})) {
                   return sdk::ClaimResult::Declined(*reason);
                 }
                 return ClaimUnless(CheckInputDtype(node, inputs, 0, FloatTypes{}));
               },
               [softmax](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
                 const std::string text = node.AttrString("reduction", "mean");
                 const LossReduction reduction = text == "none"  ? LossReduction::kNone
                                                 : text == "sum" ? LossReduction::kSum
                                                                 : LossReduction::kMean;
                 std::optional<int64_t> ignore;
                 if (node.attr_type("ignore_index") != NXRT_ATTR_UNDEFINED) {
                   ignore = node.AttrInt("ignore_index", 0);
                 }
                 return std::make_unique<LossKernel>(softmax, inputs[0].dtype, reduction, ignore);
               }});
}

}  // namespace

void RegisterLossOps(OpRegistry& r) {
  AddLoss(r, "NegativeLogLikelihoodLoss", false, 12);
  AddLoss(r, "SoftmaxCrossEntropyLoss", true, 12);
}

}  // namespace nxrt::cpu
