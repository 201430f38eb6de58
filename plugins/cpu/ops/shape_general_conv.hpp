// What the 1x1 and the one-axis float convolution kernels share
// (ops/pointwise_conv.hpp, ops/unrolled_conv.hpp): one kernel serves every
// shape of the node's ranks through a product planned once
// (onednn/float_pointwise_product.hpp) over W's rows, [maps, channels x
// kernel]; at each new shape W is checked against X and the product planned
// again for new map or row counts (a W that is not constant); at a shape
// that repeats, oneDNN's convolution is timed against the product and the
// faster kept (ops/repeated_shape_plan.hpp).
#pragma once

#include <span>

#include "cpu_kernel.hpp"
#include "onednn/float_pointwise_product.hpp"
#include "ops/repeated_shape_plan.hpp"

namespace nxrt::cpu {

class ShapeGeneralConvKernel : public CpuKernel {
 public:
  explicit ShapeGeneralConvKernel(onednn::FloatPointwiseProduct product)
      : CpuKernel(true), product_(std::move(product)) {}

  bool ServesOtherShapes() const override { return true; }
  void SetConstantInputs(std::span<const nxrt_bool> flags) override {
    constant_w_ = flags.size() > 1 && flags[1] != 0;
  }
  // Only once the current shape is settled: a call that plans allocates.
  bool CaptureSafe() const override { return direct_.Settled(); }

 protected:
  // Whether X and W have the dims of the previous call. At new ones: throws
  // unless W is [maps, X's channels, kernel...] of X's rank, keeps the dims
  // in x_dims_ and w_dims_, and plans the product again where W's map or row
  // count changed.
  bool NoteShape(const nxrt_tensor& x, const nxrt_tensor& w);
  // B's values, or null when the node has none; throws unless B holds one
  // value per map.
  static const float* BiasOf(std::span<const nxrt_value> inputs, int64_t maps);

  // Runs the current shape on oneDNN's convolution or through `product()`,
  // as RepeatedShapePlan::Run says.
  template <typename ShapeOf, typename Product>
  void RunFastest(bool same_shape, ShapeOf&& shape_of, const nxrt_tensor& x, const nxrt_tensor& w,
                  const float* bias, nxrt_tensor& y, Product&& product) {
    direct_.Run(same_shape, shape_of, constant_w_, DataAs<float>(x), DataAs<float>(w), bias,
                MutableDataAs<float>(y), product);
  }

  onednn::FloatPointwiseProduct product_;
  Dims x_dims_, w_dims_;  // the last call's

 private:
  bool constant_w_ = false;
  RepeatedShapePlan direct_;
};

}  // namespace nxrt::cpu
