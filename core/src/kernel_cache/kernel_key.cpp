#include "kernel_cache/kernel_key.hpp"

#include <functional>

namespace nxrt::kernel_cache {

size_t NodeRefHash::operator()(const NodeRef& ref) const noexcept {
  const size_t graph_hash = std::hash<const graph::Graph*>{}(ref.graph);
  const size_t node_hash = std::hash<graph::NodeId>{}(ref.node);
  return graph_hash ^ (node_hash + 0x9e3779b97f4a7c15ULL + (graph_hash << 6) + (graph_hash >> 2));
}

bool KernelKey::MatchesShapes(std::span<const InputShape> shapes) const {
  if (inputs.size() != shapes.size()) return false;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const InputShape& key = inputs[i];
    const InputShape& shape = shapes[i];
    if (key.absent != shape.absent || key.dims.size() != shape.dims.size()) return false;
    // Element by element: dims are a few long, shorter than a memcmp call.
    for (size_t d = 0; d < key.dims.size(); ++d) {
      if (key.dims[d] != shape.dims[d]) return false;
    }
  }
  return true;
}

bool KernelKey::MatchesRanks(std::span<const InputShape> shapes) const {
  if (inputs.size() != shapes.size()) return false;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (inputs[i].absent != shapes[i].absent || inputs[i].dims.size() != shapes[i].dims.size()) {
      return false;
    }
  }
  return true;
}

std::string FormatShapes(std::span<const InputShape> shapes) {
  std::string text;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i != 0) text += ",";
    if (shapes[i].absent) {
      text += "(absent)";
      continue;
    }
    text += "[";
    for (size_t d = 0; d < shapes[i].dims.size(); ++d) {
      if (d != 0) text += ",";
      text += std::to_string(shapes[i].dims[d]);
    }
    text += "]";
  }
  return text;
}

}  // namespace nxrt::kernel_cache
