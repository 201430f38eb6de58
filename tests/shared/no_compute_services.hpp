// Host compute services that refuse every request, for tests that call a
// kernel directly with all its outputs preallocated, as a replay does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "plugin_host/compute_context.hpp"

namespace nxrt_test {

class NoServices : public nxrt::plugin_host::ComputeServices {
 public:
  nxrt::Status AllocateOutput(size_t, nxrt_dtype, std::span<const int64_t>, nxrt_tensor*) override {
    return Refused();
  }
  nxrt::Status AllocateSequenceOutput(size_t, size_t) override { return Refused(); }
  nxrt::Status AllocateSequenceElement(size_t, size_t, nxrt_dtype, std::span<const int64_t>,
                                       nxrt_tensor*) override {
    return Refused();
  }
  nxrt::Status SetOutputNone(size_t) override { return Refused(); }
  nxrt::Status SetStringElement(size_t, size_t, std::string_view) override { return Refused(); }
  nxrt::Status RunSubgraph(std::string_view, std::span<const nxrt_value>,
                           std::span<nxrt_value>) override {
    return Refused();
  }

 private:
  static nxrt::Status Refused() { return nxrt::Unsupported("outputs are preallocated"); }
};

}  // namespace nxrt_test
