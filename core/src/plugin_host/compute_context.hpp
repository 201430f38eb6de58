// The host's definition of nxrt_compute_context, and the services behind it.
//
// A kernel's compute may ask the host to allocate outputs whose shape the host
// could not know, fill sequences, mark optional outputs absent, store strings
// or run a control-flow body. The executor implements ComputeServices for one
// compute call; the host-table functions forward to it through the context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "nxrt/ep_abi.h"
#include "nxrt/support/status.hpp"

namespace nxrt::plugin_host {

class ComputeServices {
 public:
  virtual ~ComputeServices() = default;

  // Allocates output `index` (host-owned memory) and describes it in `*out`.
  // For an output the host preallocated: the same shape returns that buffer,
  // another shape is InvalidArgument.
  virtual Status AllocateOutput(size_t index, nxrt_dtype dtype, std::span<const int64_t> dims,
                                nxrt_tensor* out) = 0;
  virtual Status AllocateSequenceOutput(size_t index, size_t length) = 0;
  virtual Status AllocateSequenceElement(size_t index, size_t element, nxrt_dtype dtype,
                                         std::span<const int64_t> dims, nxrt_tensor* out) = 0;
  virtual Status SetOutputNone(size_t index) = 0;
  virtual Status SetStringElement(size_t index, size_t element, std::string_view text) = 0;
  // Runs the body in graph attribute `attr_name` of the computing node; the
  // outputs are host-owned and valid until the compute call returns.
  virtual Status RunSubgraph(std::string_view attr_name, std::span<const nxrt_value> inputs,
                             std::span<nxrt_value> outputs) = 0;
};

}  // namespace nxrt::plugin_host

struct nxrt_compute_context {
  nxrt::plugin_host::ComputeServices* services;  // never null
};
