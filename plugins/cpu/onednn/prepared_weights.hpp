// Constant weights reordered once into the layout a oneDNN plan prefers.
// Immutable once made, so the shape variants of a node whose plans prefer the
// same layout share one copy (a Conv kernel's shareable constant state). The
// copy lives on huge pages: products stream it, and a model's first run,
// which makes every copy, faults in a few huge pages instead of thousands of
// small ones.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <memory>

#include "huge_page_arena.hpp"
#include "nxrt/ep_sdk.hpp"
#include "primitive_runner.hpp"
#include "winograd_weights.hpp"

namespace nxrt::cpu::onednn {

class PreparedWeights : public sdk::SharedState {
 public:
  // Copies `weights`, laid out as `given`, into a new buffer laid out as
  // `preferred` (3x3 Winograd layouts through winograd_weights.hpp).
  PreparedWeights(const dnnl::memory::desc& given, const void* weights,
                  const dnnl::memory::desc& preferred)
      : desc_(preferred), buffer_(AllocateOnHugePages(preferred.get_size())) {
    if (!TransformWinogradWeights(given, static_cast<const float*>(weights), preferred,
                                  buffer_.get())) {
      ReorderOnce(given, weights, preferred, buffer_.get());
    }
  }

  const dnnl::memory::desc& desc() const { return desc_; }
  const void* data() const { return buffer_.get(); }

 private:
  dnnl::memory::desc desc_;
  std::shared_ptr<void> buffer_;
};

}  // namespace nxrt::cpu::onednn
