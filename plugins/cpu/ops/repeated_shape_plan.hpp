// oneDNN's convolution for the shape a shape-general convolution kernel keeps
// meeting, kept where it runs faster. Such a kernel (ops/pointwise_conv.hpp,
// ops/unrolled_conv.hpp) runs a product whose extents are read at run time,
// planned once for every shape. oneDNN's convolution is planned, its code
// generated, for one shape alone; at that shape it runs some layers up to
// 2x faster than the product and others slower (1x1 convolutions: a
// channel-blocked kernel with the bias and activation inside, but reorders
// to and from channel blocks around it). So a shape seen on three calls in a
// row is planned on oneDNN, the plan and the product are each timed on
// calls at that shape, and the faster is kept. A stream of new shapes never
// plans: a shape's first run and its immediate repeat stay on the product.
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "onednn/float_convolution.hpp"

namespace nxrt::cpu {

class RepeatedShapePlan {
 public:
  // One call of the kernel: `same_shape` says whether X and W have the dims
  // of the previous call. A new shape drops the plan and the timings. On the
  // third call in a row at one shape, shape_of() (an
  // onednn::ConvolutionShape, asked for only then) is planned, and `w`
  // prepared for it when `constant_w`; no plan is made where oneDNN has only
  // a reference kernel. Then runs the plan or `product()`, as the trial or
  // its outcome says. `w` is read only during the call.
  template <typename ShapeOf, typename Product>
  void Run(bool same_shape, ShapeOf&& shape_of, bool constant_w, const float* x, const float* w,
           const float* bias, float* y, Product&& product) {
    if (!same_shape) {
      Drop();
    } else if (calls_at_shape_ < kSettledCall) {
      ++calls_at_shape_;
      if (calls_at_shape_ == kPlanningCall) PlanFor(shape_of(), w, constant_w);
    }
    if (calls_at_shape_ == kProductTimingCall) {
      const Clock::time_point start = Clock::now();
      product();
      product_time_ = Clock::now() - start;
    } else if (!plan_) {
      product();
    } else if (calls_at_shape_ == kPlanTimingCall) {
      const Clock::time_point start = Clock::now();
      plan_->Run(x, w, weights_.get(), bias, y);
      Decide(Clock::now() - start);
    } else {
      plan_->Run(x, w, weights_.get(), bias, y);
    }
  }

  // Whether calls at the current shape will neither plan nor allocate.
  bool Settled() const { return calls_at_shape_ >= kSettledCall; }

 private:
  using Clock = std::chrono::steady_clock;
  // The calls at one shape: the product's first (which may size buffers),
  // the product timed, the plan made and run (its first run is its
  // warm-up), the plan timed and the choice made; from then on, settled.
  static constexpr int kProductTimingCall = 2;
  static constexpr int kPlanningCall = 3;
  static constexpr int kPlanTimingCall = 4;
  static constexpr int kSettledCall = 5;

  void Drop();
  void PlanFor(const onednn::ConvolutionShape& shape, const float* w, bool constant_w);
  // Keeps the plan if it ran faster than the product did.
  void Decide(Clock::duration plan_time);

  int calls_at_shape_ = 0;  // consecutive calls at one shape, up to kSettledCall
  Clock::duration product_time_{};
  std::optional<onednn::FloatConvolution> plan_;
  std::shared_ptr<onednn::PreparedWeights> weights_;  // W prepared for plan_ when constant
};

}  // namespace nxrt::cpu
