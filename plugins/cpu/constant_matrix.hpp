// A constant matrix operand (MatMul's or Gemm's B), kept once per node for
// all of its shape variants in the forms they read: as given in its compute
// type (the gemv of a single row, double products), and in the blocked layout
// oneDNN prefers for a float product of several rows. A float or double B
// whose bytes the host keeps (bytes_persist) is read as given in place;
// otherwise that form is a copy on huge pages, widened where the compute type
// is wider. Each copy is made the first time a variant needs it: from the
// constant's bytes while the host hands them over, later from the other
// form. So a decoder whose prefill and decode steps both read a weight holds
// one copy beside the host's: the blocked one.
#pragma once

#include <memory>
#include <mutex>

#include "nxrt/ep_abi.h"
#include "nxrt/ep_sdk.hpp"
#include "onednn/float_matmul.hpp"
#include "onednn/prepared_weights.hpp"
#include "tensor.hpp"

namespace nxrt::cpu {

class ConstantMatrix : public sdk::SharedState {
 public:
  // Takes `constant`'s dtype (a float type) and dims, and its bytes when
  // they persist; otherwise its bytes are read by the calls below, which get
  // it again while it is at hand.
  explicit ConstantMatrix(const nxrt_constant_input& constant);

  nxrt_dtype dtype() const { return dtype_; }
  const Dims& dims() const { return dims_; }

  // B as given, in its compute type (float, or double for double).
  // `source`: the constant inside prepare_constant_inputs, else null.
  const void* AsGiven(const nxrt_constant_input* source);

  // B in `plan`'s weights_desc(), for a float B and a plan made with
  // WeightsLayout::kPreferred. Variants whose plans prefer one layout share
  // one copy.
  std::shared_ptr<const onednn::PreparedWeights> Preferred(const onednn::FloatMatmul& plan,
                                                           const nxrt_constant_input* source);

 private:
  const void* AsGivenLocked(const nxrt_constant_input* source);

  const nxrt_dtype dtype_;
  const Dims dims_;
  std::mutex mutex_;            // variants made on different threads fill the forms
  const void* const in_place_;  // the host's bytes of a B read as given, or null
  std::shared_ptr<void> as_given_;
  std::shared_ptr<onednn::PreparedWeights> preferred_;
  dnnl::memory::desc preferred_source_;  // how as_given_ reads in preferred_'s plan
};

}  // namespace nxrt::cpu
