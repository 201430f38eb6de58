// What the CPU EP's attention kernels share: scratch that grows to the
// largest call seen and is kept, so steady-state calls allocate nothing, and
// the name their errors give the node.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nxrt/ep_sdk.hpp"

namespace nxrt::cpu {

// Grows `buffer` to at least `size` elements and returns its data.
inline float* Scratch(std::vector<float>& buffer, int64_t size) {
  if (buffer.size() < static_cast<size_t>(size)) buffer.resize(static_cast<size_t>(size));
  return buffer.data();
}

// "Op 'name'", as the kernels' errors begin.
inline std::string NodeText(const sdk::Node& node) {
  return std::string(node.op_type()) + " '" + std::string(node.name()) + "'";
}

}  // namespace nxrt::cpu
