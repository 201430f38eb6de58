#include "ops/repeated_shape_plan.hpp"

#include <utility>

namespace nxrt::cpu {

void RepeatedShapePlan::Drop() {
  calls_at_shape_ = 1;
  product_time_ = {};
  plan_.reset();
  weights_.reset();
}

void RepeatedShapePlan::PlanFor(const onednn::ConvolutionShape& shape, const float* w,
                                bool constant_w) {
  std::optional<onednn::FloatConvolution> plan = onednn::FloatConvolution::Plan(shape);
  if (!plan || onednn::IsReference(plan->implementation())) return;
  if (constant_w) weights_ = plan->PrepareWeights(w);
  plan_ = std::move(plan);
}

void RepeatedShapePlan::Decide(Clock::duration plan_time) {
  calls_at_shape_ = kSettledCall;
  if (plan_time < product_time_) return;
  plan_.reset();
  weights_.reset();
}

}  // namespace nxrt::cpu
