// Constant weights reordered once into the layout a oneDNN plan prefers.
// Immutable once made, so the shape variants of a node whose plans prefer the
// same layout share one copy (a Conv kernel's shareable constant state).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include "nxrt/ep_sdk.hpp"
#include "primitive_runner.hpp"

namespace nxrt::cpu::onednn {

class PreparedWeights : public sdk::SharedState {
 public:
  // Copies `weights`, laid out as `given`, into a new buffer laid out as
  // `preferred`.
  PreparedWeights(const dnnl::memory::desc& given, const void* weights,
                  const dnnl::memory::desc& preferred)
      : desc_(preferred), memory_(preferred, Engine()) {
    ReorderOnce(given, weights, preferred, memory_.get_data_handle());
  }

  const dnnl::memory::desc& desc() const { return desc_; }
  const void* data() const { return memory_.get_data_handle(); }

 private:
  dnnl::memory::desc desc_;
  dnnl::memory memory_;  // owns its buffer
};

}  // namespace nxrt::cpu::onednn
