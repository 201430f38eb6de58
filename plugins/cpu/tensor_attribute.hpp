// Tensor-valued node attributes (Constant's value, ConstantOfShape's value),
// read through the host table and copied, since the SDK's Node wraps only
// the scalar and list getters.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "nxrt/ep_sdk.hpp"
#include "tensor.hpp"

namespace nxrt::cpu {

// A tensor attribute's value, copied out of the node (owned_value.hpp's
// OwnedTensor is the EP's run-time value; this is a plain record).
struct AttributeTensor {
  nxrt_dtype dtype = NXRT_DTYPE_UNDEFINED;
  Dims dims;
  std::vector<std::byte> bytes;      // raw little-endian layout
  std::vector<std::string> strings;  // for NXRT_DTYPE_STRING
};

// nullopt when the node has no tensor attribute `name`.
std::optional<AttributeTensor> ReadTensorAttribute(const sdk::Host& host, const sdk::Node& node,
                                                   const char* name);

// Writes `tensor` to output `index` (strings through the host).
void WriteAttributeTensor(sdk::ComputeContext& ctx, std::span<nxrt_value> outputs, size_t index,
                          const AttributeTensor& tensor);

}  // namespace nxrt::cpu
